package jose

import (
	"errors"
	"testing"
)

// TestControlGuard checks the defense-in-depth hook of the default dialer,
// which re-checks the literal address the socket is about to connect to.
func TestControlGuard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		dev   bool
		addr  string
		allow bool
	}{
		{name: "ok/public", addr: "93.184.216.34:443", allow: true},
		{name: "ok/dev-loopback", dev: true, addr: "127.0.0.1:8080", allow: true},
		{name: "fail/private", addr: "10.0.0.1:443"},
		{name: "fail/loopback-no-dev", addr: "[::1]:443"},
		{name: "fail/mapped-metadata", dev: true, addr: "[::ffff:169.254.169.254]:80"},
		{name: "fail/unparsable", addr: "example.com:443"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := NewJWKSClient(Config{AllowLoopbackHTTP: tt.dev})
			if err != nil {
				t.Fatal(err)
			}
			err = c.controlGuard("tcp", tt.addr, nil)
			if tt.allow && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tt.allow && !errors.Is(err, ErrForbiddenAddress) {
				t.Fatalf("err = %v, want ErrForbiddenAddress", err)
			}
		})
	}
}
