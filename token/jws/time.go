package jws

import (
	"math"
	"time"
)

// Seconds returns t as a NumericDate with fractional seconds, the form the
// claim checks compare against.
func Seconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

// Time converts a NumericDate (seconds, possibly fractional) to a
// time.Time.
func Time(f float64) time.Time {
	sec := math.Floor(f)
	return time.Unix(int64(sec), int64((f-sec)*1e9))
}
