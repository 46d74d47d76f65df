package token

import (
	"strings"
	"testing"
)

func TestUnverifiedGrantID(t *testing.T) {
	for tok, want := range map[string]string{
		"eyJhbGciOiJFUzI1NiJ9.eyJncmFudF9pZCI6ImEyYWdyYW50X1gifQ.c2ln": "a2agrant_X",
		"a.b":                     "",
		"a.!!!.c":                 "",
		"a.bnVsbA.c":              "",
		"a.W10.c":                 "",
		strings.Repeat("a", 9000): "",
	} {
		if got := unverifiedGrantID(tok); got != want {
			t.Errorf("unverifiedGrantID(%.20q) = %q, want %q", tok, got, want)
		}
	}
}
