package server

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// The cleanup path releases in reverse order of acquisition, reports each
// failure with what it was releasing, goes on past a failure, and
// releases each resource once.
func TestCleanupRunsInReverseOnce(t *testing.T) {
	var c cleanup
	var order []string
	for _, what := range []string{"store", "tasks", "listener"} {
		c.push(what, func() error {
			order = append(order, what)
			if what == "tasks" {
				return errors.New("boom")
			}
			return nil
		})
	}
	err := c.run()
	if want := []string{"listener", "tasks", "store"}; !slices.Equal(order, want) {
		t.Fatalf("released %v, want %v", order, want)
	}
	if err == nil || !strings.Contains(err.Error(), "close tasks: boom") {
		t.Fatalf("run = %v, want the failure named", err)
	}
	if err := c.run(); err != nil || len(order) != 3 {
		t.Fatalf("second run: %v, released %v; want nothing more", err, order)
	}
}

// A shutdown that runs out of time names the loops still running; once
// they return, nothing is.
func TestRunningLoopsNamesTheStuckOnes(t *testing.T) {
	release := make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	r := startLoops(ctx, []loop{
		{"prompt", func(ctx context.Context) { <-ctx.Done() }},
		{"stuck", func(context.Context) { <-release }},
	})
	cancel()
	// Each wait runs out after 50 ms; the prompt loop returns within a few
	// of them however busy the machine.
	for deadline := time.Now().Add(5 * time.Second); ; {
		short, stop := context.WithTimeout(t.Context(), 50*time.Millisecond)
		got := r.wait(short)
		stop()
		if slices.Equal(got, []string{"stuck"}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("running after the shutdown timeout: %v, want [stuck]", got)
		}
	}
	close(release)
	if got := r.wait(t.Context()); got != nil {
		t.Fatalf("running after every loop returned: %v", got)
	}
}
