package config

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestOperationsConfigTable: the configuration table of docs/operations.md
// names every PACT_* setting pactd serve reads, and no other, each with its
// flag and, where it has one, its default; a setting added, renamed or
// given a new default here fails until the table says so.
func TestOperationsConfigTable(t *testing.T) {
	raw, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## Configuration\n")
	if !ok {
		t.Fatal(`docs/operations.md has no "## Configuration" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	code := regexp.MustCompile("`([^`]*)`")
	spans := func(cell string) []string {
		var out []string
		for _, m := range code.FindAllStringSubmatch(cell, -1) {
			out = append(out, m[1])
		}
		return out
	}
	type row struct{ flag, def string }
	table := map[string]row{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `PACT_") {
			continue
		}
		cells := strings.SplitN(strings.TrimPrefix(line, "| "), " | ", 4)
		if len(cells) < 4 {
			t.Errorf("docs/operations.md: a row without its four columns: %s", line)
			continue
		}
		vars, flags, defs := spans(cells[0]), spans(cells[1]), spans(cells[2])
		if len(flags) != len(vars) {
			t.Errorf("docs/operations.md: %v with flags %v: one flag per variable", vars, flags)
			continue
		}
		for i, v := range vars {
			if _, dup := table[v]; dup {
				t.Errorf("docs/operations.md: %s has two rows", v)
			}
			r := row{flag: flags[i]}
			if len(defs) == len(vars) {
				r.def = defs[i]
			} else if len(defs) > 0 {
				r.def = defs[0]
			}
			table[v] = r
		}
	}
	if len(table) < 20 {
		t.Fatalf("docs/operations.md: read %d settings from the table; the test read the wrong section", len(table))
	}
	opts := options()
	for _, o := range opts {
		r, ok := table[o.env]
		if !ok {
			t.Errorf("docs/operations.md's configuration table has no row for %s (--%s)", o.env, o.flag)
			continue
		}
		if r.flag != "--"+o.flag {
			t.Errorf("docs/operations.md: %s's flag is %q, want --%s", o.env, r.flag, o.flag)
		}
		if o.def != "" && r.def != o.def {
			t.Errorf("docs/operations.md: %s's default is %q, want %q", o.env, r.def, o.def)
		}
	}
	for v := range table {
		if !slices.ContainsFunc(opts, func(o option) bool { return o.env == v }) {
			t.Errorf("docs/operations.md's configuration table has %s, which pactd serve does not read", v)
		}
	}
}
