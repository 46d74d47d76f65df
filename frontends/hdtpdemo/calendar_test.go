package hdtpdemo_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"pactd.dev/pactd/frontends/hdtpdemo"
	"pactd.dev/pactd/frontends/hdtphost"
)

const endpoint = "https://agent.maya.example/mcp"

var tool = hdtpdemo.AvailabilityTool(hdtpdemo.Calendars{endpoint: {{Start: "2026-12-08T10:00:00+01:00", End: "2026-12-08T11:00:00+01:00"}}})

const window = `"window":{"from":"2026-12-08T09:00:00+01:00","to":"2026-12-08T13:00:00+01:00","tz":"Europe/Berlin"}`

func run(t *testing.T, args, at string) (string, string) {
	t.Helper()
	res, err := tool.Run(context.Background(), &hdtphost.Call{Endpoint: at, Arguments: json.RawMessage(args)})
	var refusal *hdtphost.Refusal
	if errors.As(err, &refusal) {
		return "", refusal.Code
	}
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	return string(b), ""
}

// The answers, derived by hand: the busy hour is skipped, slots follow
// each other from the window's start, at most five.
func TestAvailability(t *testing.T) {
	got, _ := run(t, `{`+window+`,"duration_min":60}`, endpoint)
	want := `{"slots":[{"start":"2026-12-08T09:00:00+01:00","end":"2026-12-08T10:00:00+01:00","tz":"Europe/Berlin"},` +
		`{"start":"2026-12-08T11:00:00+01:00","end":"2026-12-08T12:00:00+01:00","tz":"Europe/Berlin"},` +
		`{"start":"2026-12-08T12:00:00+01:00","end":"2026-12-08T13:00:00+01:00","tz":"Europe/Berlin"}]}`
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	var five struct{ Slots []hdtpdemo.Slot }
	got, _ = run(t, `{`+window+`,"duration_min":15}`, endpoint)
	if json.Unmarshal([]byte(got), &five) != nil || len(five.Slots) != hdtpdemo.MaxSlots {
		t.Errorf("15-minute slots: %s, want %d", got, hdtpdemo.MaxSlots)
	}
}

func TestAvailabilityRefusals(t *testing.T) {
	for name, c := range map[string]struct{ args, at, code string }{
		"fail/duration-zero":     {`{` + window + `,"duration_min":0}`, endpoint, "bad_request"},
		"fail/duration-fraction": {`{` + window + `,"duration_min":1.5}`, endpoint, "bad_request"},
		"fail/no-window":         {`{"duration_min":60}`, endpoint, "bad_request"},
		"fail/unknown-zone":      {`{"window":{"from":"2026-12-08T09:00:00+01:00","to":"2026-12-08T13:00:00+01:00","tz":"Mars/Olympus"},"duration_min":60}`, endpoint, "bad_request"},
		"fail/backwards":         {`{"window":{"from":"2026-12-08T13:00:00+01:00","to":"2026-12-08T09:00:00+01:00","tz":"Europe/Berlin"},"duration_min":60}`, endpoint, "bad_request"},
		"fail/no-calendar":       {`{` + window + `,"duration_min":60}`, "https://agent.you.example/mcp", "unavailable"},
		"ok/control":             {`{` + window + `,"duration_min":60}`, endpoint, ""},
	} {
		t.Run(name, func(t *testing.T) {
			if _, code := run(t, c.args, c.at); code != c.code {
				t.Errorf("refused %q, want %q", code, c.code)
			}
		})
	}
}
