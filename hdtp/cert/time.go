package cert

import (
	"time"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"
)

// readTime reads one validity date as RFC 5280 §4.1.2.5 writes it: a
// UTCTime YYMMDDHHMMSSZ for 1950 to 2049, a GeneralizedTime
// YYYYMMDDHHMMSSZ from 2050 on; seconds and the Z are required, fractions
// are not allowed, and the date must exist (260230120000Z is refused, not
// read as 2 March).
func readTime(s *cryptobyte.String) (time.Time, bool) {
	var v cryptobyte.String
	var tag cbasn1.Tag
	if !s.ReadAnyASN1(&v, &tag) {
		return time.Time{}, false
	}
	var year int
	var rest []byte
	switch tag {
	case cbasn1.UTCTime:
		if len(v) != 13 {
			return time.Time{}, false
		}
		yy, ok := digits(v[:2])
		if !ok {
			return time.Time{}, false
		}
		year = 2000 + yy
		if yy >= 50 {
			year = 1900 + yy
		}
		rest = v[2:]
	case cbasn1.GeneralizedTime:
		if len(v) != 15 {
			return time.Time{}, false
		}
		y, ok := digits(v[:4])
		if !ok || y < 2050 {
			return time.Time{}, false
		}
		year = y
		rest = v[4:]
	default:
		return time.Time{}, false
	}
	// rest is MMDDHHMMSSZ.
	if rest[10] != 'Z' {
		return time.Time{}, false
	}
	var f [5]int
	for i := range f {
		n, ok := digits(rest[2*i : 2*i+2])
		if !ok {
			return time.Time{}, false
		}
		f[i] = n
	}
	month, day, hour, minute, second := f[0], f[1], f[2], f[3], f[4]
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || second > 59 {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, second, 0, time.UTC), true
}

func digits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// addTime writes t as readTime reads it.
func addTime(b *cryptobyte.Builder, t time.Time) {
	t = t.UTC()
	if y := t.Year(); y >= 1950 && y < 2050 {
		b.AddASN1(cbasn1.UTCTime, func(b *cryptobyte.Builder) { b.AddBytes([]byte(t.Format("060102150405Z"))) })
		return
	}
	b.AddASN1(cbasn1.GeneralizedTime, func(b *cryptobyte.Builder) { b.AddBytes([]byte(t.Format("20060102150405Z"))) })
}
