// Package freeport reserves loopback TCP ports for a child process to bind
// (a frontend, PostgreSQL, PgBouncer, a lab's pactd).
//
// The usual trick, listening on port 0 and closing, hands out a port from
// the kernel's ephemeral range, the range it also draws from for every
// outgoing connection and every other port-0 listener. Between the close
// and the child's bind, any of those may take the port, and the child
// exits with "address already in use". A port outside
// that range is never handed out by the kernel, so only another explicit
// bind can race for it; this package picks one at random and checks that
// it binds now.
package freeport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// lowest is the lowest port handed out: ports below it are where fixed
// services live (PostgreSQL's 5432, development servers on 3000 or 8080).
const lowest = 10000

// attempts bounds the search: each pick is uniform over thousands of ports,
// so failing this many times means the loopback is out of ports.
const attempts = 64

// rangeFile holds the kernel's ephemeral range on Linux ("low\thigh").
const rangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// Listen binds 127.0.0.1 on a port outside the ephemeral range, for a
// caller that hands the listener's address to a child and closes it.
func Listen() (net.Listener, error) {
	lo, hi := ephemeralRange()
	return listen(lo, hi, rand.IntN)
}

// Port is a port outside the ephemeral range that nothing listened on at
// the time of the call.
func Port() (int, error) {
	ln, err := Listen()
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// listen tries random ports of the candidates left by excluding [lo, hi].
func listen(lo, hi int, intn func(int) int) (net.Listener, error) {
	spans := candidates(lo, hi)
	if len(spans) == 0 {
		return nil, fmt.Errorf("freeport: no port in [%d, 65535] outside the ephemeral range %d-%d", lowest, lo, hi)
	}
	return listenSpans(spans, intn)
}

// listenSpans binds a port picked uniformly from spans by intn (rand.IntN;
// a test passes its own to force a collision).
func listenSpans(spans [][2]int, intn func(int) int) (net.Listener, error) {
	total := 0
	for _, s := range spans {
		total += s[1] - s[0] + 1
	}
	var last error
	for range attempts {
		n := intn(total)
		port := 0
		for _, s := range spans {
			if size := s[1] - s[0] + 1; n < size {
				port = s[0] + n
				break
			} else {
				n -= size
			}
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			return ln, nil
		}
		last = err
	}
	return nil, fmt.Errorf("freeport: %d ports tried, none binds: %w", attempts, last)
}

// candidates are the spans [a, b] of [lowest, 65535] outside [lo, hi].
func candidates(lo, hi int) [][2]int {
	var out [][2]int
	if lo > lowest {
		out = append(out, [2]int{lowest, min(lo-1, 65535)})
	}
	if hi < 65535 {
		out = append(out, [2]int{max(hi+1, lowest), 65535})
	}
	return out
}

// ephemeralRange reads the kernel's range; where it cannot (not Linux), it
// assumes IANA's 49152-65535 (macOS and Windows) widened down to Linux's
// default low end, 32768, which covers both.
func ephemeralRange() (lo, hi int) {
	lo, hi, err := parseRange(os.ReadFile(rangeFile))
	if err != nil {
		return 32768, 65535
	}
	return lo, hi
}

// parseRange reads "low high" as the kernel writes it.
func parseRange(b []byte, err error) (int, int, error) {
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0, errors.New("freeport: want two numbers")
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || lo < 1 || hi > 65535 || lo > hi {
		return 0, 0, fmt.Errorf("freeport: not a port range: %q", b)
	}
	return lo, hi, nil
}
