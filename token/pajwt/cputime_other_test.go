//go:build !unix

package pajwt_test

import "time"

// processCPU falls back to wall time where getrusage is unavailable.
func processCPU() time.Duration { return time.Duration(time.Now().UnixNano()) }
