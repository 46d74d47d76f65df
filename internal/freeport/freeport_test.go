package freeport

import (
	"errors"
	"net"
	"reflect"
	"strconv"
	"testing"
)

func TestListenIsOutsideTheEphemeralRange(t *testing.T) {
	lo, hi := ephemeralRange()
	for range 200 {
		ln, err := Listen()
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if port < lowest || (port >= lo && port <= hi) {
			t.Fatalf("port %d: want >= %d and outside %d-%d", port, lowest, lo, hi)
		}
	}
}

func TestPortIsFreeAfterwards(t *testing.T) {
	port, err := Port()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("port %d does not bind after Port returned it: %v", port, err)
	}
	ln.Close()
}

// A taken port is skipped: the first pick lands on a bound port, the second
// on a free one.
func TestListenSkipsATakenPort(t *testing.T) {
	taken, err := Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	busy := taken.Addr().(*net.TCPAddr).Port
	free, err := Port()
	if err != nil {
		t.Fatal(err)
	}
	if free == busy {
		t.Skip("the same port came back twice")
	}
	// Two one-port spans, busy's first: the picks are index 0 (busy), then 1 (free).
	picks := []int{0, 1}
	intn := func(n int) int {
		if n != 2 {
			t.Fatalf("intn(%d): want 2 candidates", n)
		}
		p := picks[0]
		picks = picks[1:]
		return p
	}
	ln, err := listenSpans([][2]int{{busy, busy}, {free, free}}, intn)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if got := ln.Addr().(*net.TCPAddr).Port; got != free {
		t.Fatalf("bound %d, want %d (the free one of %d, %d)", got, free, busy, free)
	}
}

func TestCandidates(t *testing.T) {
	for _, c := range []struct {
		lo, hi int
		want   [][2]int
	}{
		{32768, 60999, [][2]int{{10000, 32767}, {61000, 65535}}}, // Linux's default
		{49152, 65535, [][2]int{{10000, 49151}}},                 // IANA's
		{1024, 65535, nil},                                       // everything ephemeral
		{1024, 20000, [][2]int{{20001, 65535}}},
	} {
		if got := candidates(c.lo, c.hi); !reflect.DeepEqual(got, c.want) {
			t.Errorf("candidates(%d, %d) = %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
	if _, err := listen(1024, 65535, nil); err == nil {
		t.Error("listen with no candidate port: want an error")
	}
}

func TestParseRange(t *testing.T) {
	if lo, hi, err := parseRange([]byte("32768\t60999\n"), nil); err != nil || lo != 32768 || hi != 60999 {
		t.Errorf("kernel format: %d %d %v", lo, hi, err)
	}
	for _, bad := range []string{"", "1", "a b", "0 10", "10 70000", "600 500", "1 2 3"} {
		if _, _, err := parseRange([]byte(bad), nil); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
	if _, _, err := parseRange(nil, errors.New("no file")); err == nil {
		t.Error("read error: want it passed on")
	}
}
