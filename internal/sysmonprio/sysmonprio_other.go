//go:build !linux

package sysmonprio

import (
	"context"
	"errors"
	"time"
)

// Supported is whether this platform has SCHED_BATCH.
const Supported = false

// Batch is not available here.
func Batch() (int, error) { return 0, errors.New("SCHED_BATCH is Linux's") }

// Keep returns at once here.
func Keep(context.Context, int, time.Duration, func(int)) {}
