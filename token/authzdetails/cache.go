package authzdetails

import (
	"regexp"
	"sync"
)

// patterns caches compiled field patterns: a Brand's few patterns are
// compiled once per process, not on every request. Patterns are bounded
// (MaxPattern) and come only from checked Brand declarations; the cache
// is capped so a stream of Brand updates cannot grow it without bound.
var patterns sync.Map // string -> *regexp.Regexp

var patternCount struct {
	sync.Mutex
	n int
}

const maxCachedPatterns = 1024

func compiled(p string) (*regexp.Regexp, error) {
	if re, ok := patterns.Load(p); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	patternCount.Lock()
	if patternCount.n < maxCachedPatterns {
		if _, loaded := patterns.LoadOrStore(p, re); !loaded {
			patternCount.n++
		}
	}
	patternCount.Unlock()
	return re, nil
}
