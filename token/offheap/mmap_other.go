//go:build !unix

package offheap

import "errors"

func mmap(int) ([]byte, error) { return nil, errors.New("offheap: no mmap on this platform") }

func munmap([]byte) error { return nil }
