package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"
)

// fetchProfile asks a net/http/pprof listener (only a profiling build of
// pactd has one, on loopback) for a CPU profile covering the run of length
// d that starts now, and writes it to path. The returned channel receives
// the outcome once.
func fetchProfile(ctx context.Context, base string, d time.Duration, path string) <-chan error {
	done := make(chan error, 1)
	secs := max(int(d/time.Second)-1, 1) // stay inside the run
	go func() {
		done <- func() error {
			u, err := url.Parse(base)
			if err != nil {
				return err
			}
			if h := u.Hostname(); h != "127.0.0.1" && h != "localhost" && h != "::1" {
				return errors.New("-server-pprof must be on loopback")
			}
			ctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+30*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, secs), nil)
			if err != nil {
				return err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("profile: %s", resp.Status)
			}
			b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
			if err != nil {
				return err
			}
			return os.WriteFile(path, b, 0o644)
		}()
	}()
	return done
}
