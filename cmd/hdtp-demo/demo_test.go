package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestDemoWalk runs the whole walk, as the README's block does, and checks
// its answers: pending, ok, then the three free slots sealed back.
func TestDemoWalk(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), &out); err != nil {
		t.Fatalf("the walk failed: %v\n%s", err, out.String())
	}
	want := []string{
		"$ pactd hdtp contact request ",
		`Maya's agent answered {"status":"pending"} (sealed: true)`,
		"$ pactd hdtp contact approve ",
		`your agent answered {"status":"ok"} (sealed: true)`,
		"3 free slots",
		"2026-12-08T09:00:00+01:00 – 2026-12-08T10:00:00+01:00 (Europe/Berlin)",
		"2026-12-08T11:00:00+01:00 – 2026-12-08T12:00:00+01:00 (Europe/Berlin)",
		"2026-12-08T12:00:00+01:00 – 2026-12-08T13:00:00+01:00 (Europe/Berlin)",
		"done: two people's agents talked through pactd",
	}
	rest := out.String()
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("the output lacks %q (in this order):\n%s", w, out.String())
		}
		rest = rest[i+len(w):]
	}
}
