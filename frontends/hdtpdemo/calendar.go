// Package hdtpdemo is the content a demo person's agent serves through an
// HDTP host: a calendar answering check_availability (HDTP §6.2, PACT
// §6.2: up to five owner-policy candidates {start, end, tz}, never a
// free/busy dump). The hosts' examples, cmd/hdtp-demo and the e2e tests
// run it; a real host runs the person's own calendar instead.
package hdtpdemo

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"pactd.dev/pactd/frontends/hdtphost"
)

// MaxSlots is the most slots an answer holds (availability_slots, HDTP
// §12).
const MaxSlots = 5

// Calendars are the busy times of each identity, by endpoint.
type Calendars map[string][]Interval

// Interval is a busy time, in RFC 3339.
type Interval struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// Slot is a free time offered: start and end in RFC 3339 in the asked time
// zone, and that zone.
type Slot struct {
	Start string `json:"start"`
	End   string `json:"end"`
	TZ    string `json:"tz"`
}

// availabilityArgs are check_availability's arguments.
type availabilityArgs struct {
	Window *struct {
		From string `json:"from"`
		To   string `json:"to"`
		TZ   string `json:"tz"`
	} `json:"window"`
	DurationMin *int `json:"duration_min"`
}

// AvailabilityTool is check_availability over the calendars: the free
// slots of duration_min minutes in the window, back to back from its
// start, skipping busy times, at most MaxSlots. A window or duration it
// cannot read, or an unknown time zone, is refused bad_request; an
// identity without a calendar unavailable (HDTP §6.2).
func AvailabilityTool(cals Calendars) hdtphost.Tool {
	return hdtphost.Tool{
		Name: "check_availability", Permission: "calendar.availability",
		Description: "Free times in a window: up to five slots of the asked length.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"window":{"type":"object","properties":{"from":{"type":"string"},"to":{"type":"string"},"tz":{"type":"string"}},"required":["from","to","tz"]},"duration_min":{"type":"integer"}},"required":["window","duration_min"]}`),
		Run: func(_ context.Context, call *hdtphost.Call) (any, error) {
			busy, ok := cals[call.Endpoint]
			if !ok {
				return nil, &hdtphost.Refusal{Code: "unavailable"}
			}
			slots, err := Free(busy, call.Arguments)
			if err != nil {
				return nil, &hdtphost.Refusal{Code: "bad_request"}
			}
			return map[string]any{"slots": slots}, nil
		},
	}
}

// Free computes check_availability's answer for the busy times and the
// call's arguments.
func Free(busy []Interval, arguments json.RawMessage) ([]Slot, error) {
	var a availabilityArgs
	if err := json.Unmarshal(arguments, &a); err != nil || a.Window == nil || a.DurationMin == nil ||
		*a.DurationMin < 1 || *a.DurationMin > 24*60 {
		return nil, errors.New("check_availability: window {from, to, tz} and duration_min (1 to 1440) are required")
	}
	loc, err := time.LoadLocation(a.Window.TZ)
	if err != nil || a.Window.TZ == "" {
		return nil, errors.New("check_availability: unknown time zone")
	}
	from, err1 := time.Parse(time.RFC3339, a.Window.From)
	to, err2 := time.Parse(time.RFC3339, a.Window.To)
	if err1 != nil || err2 != nil || !from.Before(to) || to.Sub(from) > 31*24*time.Hour {
		return nil, errors.New("check_availability: from and to are RFC 3339 times, from first, at most 31 days apart")
	}
	var taken [][2]time.Time
	for _, b := range busy {
		s, err1 := time.Parse(time.RFC3339, b.Start)
		e, err2 := time.Parse(time.RFC3339, b.End)
		if err1 == nil && err2 == nil {
			taken = append(taken, [2]time.Time{s, e})
		}
	}
	d := time.Duration(*a.DurationMin) * time.Minute
	slots := []Slot{}
	for s := from; !s.Add(d).After(to) && len(slots) < MaxSlots; s = s.Add(d) {
		free := true
		for _, t := range taken {
			if s.Before(t[1]) && t[0].Before(s.Add(d)) {
				free = false
				break
			}
		}
		if free {
			slots = append(slots, Slot{Start: s.In(loc).Format(time.RFC3339), End: s.Add(d).In(loc).Format(time.RFC3339), TZ: a.Window.TZ})
		}
	}
	return slots, nil
}
