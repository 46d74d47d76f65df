package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Request kinds of a -mix.
const (
	kindNew        = "new"        // VerifyAgentRequest, a freshly minted PA token (cache miss)
	kindRepeat     = "repeat"     // VerifyAgentRequest, a token sent before (cache hit)
	kindFloor      = "floor"      // VerifyAgentRequest refused before any JOSE work
	kindDelegated  = "delegated"  // VerifyAgentRequest with a delegation token
	kindIntrospect = "introspect" // TokenService.IntrospectToken of a delegation token
	kindRefresh    = "refresh"    // DelegationService.IssueDelegation, refresh_token grant
	kindDevice     = "device"     // DelegationService.StartDeviceAuthorization
)

// allKinds lists the kinds in the order reports show them.
var allKinds = []string{kindNew, kindRepeat, kindFloor, kindDelegated, kindIntrospect, kindRefresh, kindDevice}

// maxMixWeight bounds one weight, so the schedule stays small.
const maxMixWeight = 1000

// mixEntry is one kind and its share.
type mixEntry struct {
	kind   string
	weight int
}

// parseMix reads "new=60,repeat=30,delegated=10": kinds with whole-number
// weights (ratios, not necessarily percentages), each kind at most once.
func parseMix(s string) ([]mixEntry, error) {
	var out []mixEntry
	seen := map[string]bool{}
	for part := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, fmt.Errorf("-mix: %q is not kind=weight", part)
		}
		if !slices.Contains(allKinds, k) {
			return nil, fmt.Errorf("-mix: unknown kind %q (kinds: %s)", k, strings.Join(allKinds, ", "))
		}
		if seen[k] {
			return nil, fmt.Errorf("-mix: %s given twice", k)
		}
		seen[k] = true
		w, err := strconv.Atoi(v)
		if err != nil || w < 0 || w > maxMixWeight {
			return nil, fmt.Errorf("-mix: weight of %s must be a whole number in [0, %d], not %q", k, maxMixWeight, v)
		}
		if w > 0 {
			out = append(out, mixEntry{k, w})
		}
	}
	if len(out) == 0 {
		return nil, errors.New("-mix: at least one kind needs a positive weight")
	}
	return out, nil
}

// schedule spreads the kinds over one cycle of sum(weights) slots by
// smooth weighted round robin, so every stretch of requests holds the
// stated ratios (request i is schedule[i % len]).
func schedule(mix []mixEntry) []string {
	total := 0
	for _, m := range mix {
		total += m.weight
	}
	cur := make([]int, len(mix))
	out := make([]string, 0, total)
	for range total {
		best := 0
		for i, m := range mix {
			cur[i] += m.weight
			if cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= total
		out = append(out, mix[best].kind)
	}
	return out
}

// needsGrants reports whether the mix uses delegation tokens.
func needsGrants(mix []mixEntry) bool {
	for _, m := range mix {
		switch m.kind {
		case kindDelegated, kindIntrospect, kindRefresh:
			return true
		}
	}
	return false
}

// rateShape is the open-loop rate over time: constant, a linear ramp, or
// steps. A zero shape is closed loop.
type rateShape struct {
	constant float64
	// ramp: from, to over rampFor, then to.
	from, to float64
	rampFor  time.Duration
	// steps: each rate held for stepFor, the last to the end.
	steps   []float64
	stepFor time.Duration
}

func (r rateShape) closed() bool { return r.constant == 0 && r.rampFor == 0 && len(r.steps) == 0 }

// at returns the rate asked for at offset t into the run.
func (r rateShape) at(t time.Duration) float64 {
	switch {
	case r.rampFor > 0:
		if t >= r.rampFor {
			return r.to
		}
		return r.from + (r.to-r.from)*float64(t)/float64(r.rampFor)
	case len(r.steps) > 0:
		i := min(int(t/r.stepFor), len(r.steps)-1)
		return r.steps[i]
	}
	return r.constant
}

// peak is the largest rate the shape asks for.
func (r rateShape) peak() float64 {
	p := max(r.constant, r.from, r.to)
	for _, s := range r.steps {
		p = max(p, s)
	}
	return p
}

func parseRate(v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f >= 1 && f <= maxRate) {
		return 0, fmt.Errorf("rate %q must be a number in [1, %d]", v, maxRate)
	}
	return f, nil
}

// parseRamp reads "100:1000:60s".
func parseRamp(s string) (rateShape, error) {
	p := strings.Split(s, ":")
	if len(p) != 3 {
		return rateShape{}, fmt.Errorf("-ramp %q must be FROM:TO:DURATION, e.g. 100:1000:60s", s)
	}
	from, err := parseRate(p[0])
	if err != nil {
		return rateShape{}, fmt.Errorf("-ramp: %w", err)
	}
	to, err := parseRate(p[1])
	if err != nil {
		return rateShape{}, fmt.Errorf("-ramp: %w", err)
	}
	d, err := time.ParseDuration(p[2])
	if err != nil || d <= 0 || d > maxSoak {
		return rateShape{}, fmt.Errorf("-ramp: duration %q must be in (0, %s]", p[2], maxSoak)
	}
	return rateShape{from: from, to: to, rampFor: d}, nil
}

// maxSteps bounds -steps.
const maxSteps = 100

// parseSteps reads "100,200,400:30s".
func parseSteps(s string) (rateShape, error) {
	rates, hold, ok := strings.Cut(s, ":")
	if !ok {
		return rateShape{}, fmt.Errorf("-steps %q must be RATE,RATE,...:DURATION, e.g. 100,200,400:30s", s)
	}
	d, err := time.ParseDuration(hold)
	if err != nil || d <= 0 || d > maxSoak {
		return rateShape{}, fmt.Errorf("-steps: duration %q must be in (0, %s]", hold, maxSoak)
	}
	var out rateShape
	out.stepFor = d
	for v := range strings.SplitSeq(rates, ",") {
		f, err := parseRate(v)
		if err != nil {
			return rateShape{}, fmt.Errorf("-steps: %w", err)
		}
		if len(out.steps) == maxSteps {
			return rateShape{}, fmt.Errorf("-steps: at most %d steps", maxSteps)
		}
		out.steps = append(out.steps, f)
	}
	return out, nil
}
