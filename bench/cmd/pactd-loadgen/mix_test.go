package main

import (
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// The histogram's quantiles are within 1/64 of the exact nearest-rank
// quantile of the same values, and its maximum is exact.
func TestHistQuantilesWithinBucketError(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h hist
	vals := make([]int64, 20000)
	for i := range vals {
		vals[i] = int64(rng.ExpFloat64()*2e6) + 1 // ns, mean 2 ms
		h.add(vals[i])
	}
	slices.Sort(vals)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999, 1} {
		exact := vals[max(0, int(float64(len(vals))*q+0.999999)-1)]
		got := h.quantile(q)
		if got < exact || float64(got-exact) > float64(exact)/64 {
			t.Errorf("q%v: got %d, exact %d", q, got, exact)
		}
	}
	if h.quantile(1) != vals[len(vals)-1] {
		t.Errorf("max %d, want %d", h.quantile(1), vals[len(vals)-1])
	}
	for _, v := range []int64{1, 63, 64, 65, 127, 128, 1000, 1 << 40} {
		if top := bucketTop(bucketOf(v)); top < v || bucketOf(top) != bucketOf(v) || bucketOf(top+1) == bucketOf(v) {
			t.Errorf("bucket of %d: top %d", v, top)
		}
	}
}

// A request is counted in the interval of its due time, failures by kind
// and label, and intervals without answers appear with zero throughput.
func TestRecorderIntervals(t *testing.T) {
	t0 := time.Now()
	r := newRecorder(t0, time.Second)
	r.record(kindNew, t0.Add(100*time.Millisecond), 2*time.Millisecond, "")
	r.record(kindNew, t0.Add(900*time.Millisecond), 4*time.Millisecond, "denied 401 DENY_REASON_EXPIRED")
	r.record(kindRepeat, t0.Add(2500*time.Millisecond), time.Millisecond, "")
	r.fail(kindDevice, "not sent before the deadline")
	r.flush(time.Now(), 0, true, func(time.Duration) float64 { return 10 })
	iv := r.intervals(nil)
	if len(iv) != 3 || iv[0].Requests != 2 || iv[0].Errors != 1 || iv[1].Requests != 0 || iv[2].Requests != 1 || iv[0].TargetRate != 10 {
		t.Fatalf("intervals %+v", iv)
	}
	if iv[0].Max != 4 || iv[0].P50 < 2 || iv[0].P50 > 2*(1+1.0/64) {
		t.Errorf("interval 0 latencies %+v", iv[0].latencySummary)
	}
	f := r.failLabels()
	if len(f) != 2 || f[0].Count != 1 || !slices.ContainsFunc(f, func(l labelCount) bool { return l.Label == "new: denied 401 DENY_REASON_EXPIRED" }) {
		t.Errorf("failures %+v", f)
	}
}

// The schedule holds the stated ratios in every cycle and spreads a kind
// out rather than bunching it.
func TestMixSchedule(t *testing.T) {
	m, err := parseMix("new=60,repeat=30,delegated=10")
	if err != nil {
		t.Fatal(err)
	}
	s := schedule(m)
	count := map[string]int{}
	for _, k := range s {
		count[k]++
	}
	if len(s) != 100 || count[kindNew] != 60 || count[kindRepeat] != 30 || count[kindDelegated] != 10 {
		t.Fatalf("schedule counts %v of %d", count, len(s))
	}
	for i := 0; i+10 <= len(s); i += 10 {
		if c := strings.Count(strings.Join(s[i:i+10], " "), kindDelegated); c != 1 {
			t.Errorf("slots %d-%d hold %d delegated, want 1", i, i+9, c)
		}
	}
	for spec, want := range map[string]string{
		"new":                 `"new" is not kind=weight`,
		"new=1,new=2":         "new given twice",
		"bogus=1":             `unknown kind "bogus"`,
		"new=-1":              "weight of new must be a whole number in [0, 1000]",
		"new=1001":            "weight of new must be a whole number in [0, 1000]",
		"new=0,repeat=0":      "at least one kind needs a positive weight",
		"new=1.5":             "weight of new",
		"refresh=1,device=1,": `"" is not kind=weight`,
	} {
		if _, err := parseMix(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseMix(%q) = %v, want %q", spec, err, want)
		}
	}
}

func TestRateShapes(t *testing.T) {
	r, err := parseRamp("100:1000:60s")
	if err != nil {
		t.Fatal(err)
	}
	if r.at(0) != 100 || r.at(30*time.Second) != 550 || r.at(90*time.Second) != 1000 || r.peak() != 1000 {
		t.Errorf("ramp: %v %v %v", r.at(0), r.at(30*time.Second), r.at(90*time.Second))
	}
	s, err := parseSteps("100,200,400:30s")
	if err != nil {
		t.Fatal(err)
	}
	if s.at(0) != 100 || s.at(31*time.Second) != 200 || s.at(61*time.Second) != 400 || s.at(time.Hour) != 400 {
		t.Errorf("steps: %v", s.steps)
	}
	for spec, want := range map[string]string{"100:1000": "FROM:TO:DURATION", "0:10:1s": "[1, 1000000]", "1:10:25h": "(0, 24h0m0s]"} {
		if _, err := parseRamp(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseRamp(%q) = %v, want %q", spec, err, want)
		}
	}
	for spec, want := range map[string]string{"100,200": "RATE,RATE", "100,x:1s": `rate "x"`, "100:0s": "(0, 24h0m0s]"} {
		if _, err := parseSteps(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseSteps(%q) = %v, want %q", spec, err, want)
		}
	}
}

// Every staging flag is bounded; a soak may run a day with -mix, a
// pre-signed -mode run no longer than its tokens live.
func TestStagingFlagBounds(t *testing.T) {
	ok := [][]string{
		{"-mix", "new=1", "-duration", "24h", "-interval", "1s", "-rate", "100"},
		{"-mix", "new=1", "-ramp", "1:10:1s"},
		{"-mode", "new", "-d", "200s"},
	}
	for _, a := range ok {
		if _, err := parseFlags(a, io.Discard); err != nil {
			t.Errorf("%v: %v", a, err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-mix", "new=1", "-duration", "25h"}, "-d must be in (0, 24h0m0s]"},
		{[]string{"-mode", "new", "-d", "201s"}, "-d above 3m20s needs -mix"},
		{[]string{"-mix", "new=1", "-duration", "24h", "-interval", "100ms"}, "at most 86400 intervals"},
		{[]string{"-mix", "new=1", "-timeout", "2m"}, "-timeout must be in [100ms, 1m]"},
		{[]string{"-mix", "new=1", "-register", "maybe"}, "-register must be auto, print or skip"},
		{[]string{"-mix", "new=1", "-register", "skip"}, "-register skip needs -audience"},
		{[]string{"-mix", "new=1", "-grants", "1001"}, "-grants must be in [1, 1000]"},
		{[]string{"-mix", "new=1", "-repeat-tokens", "0"}, "-repeat-tokens must be in [1, 65536]"},
		{[]string{"-mix", "new=1", "-cert", "c.pem"}, "-cert and -key go together"},
		{[]string{"-mix", "new=1", "-jwks-listen", "127.0.0.1:0"}, "-jwks-listen needs -jwks-cert"},
		{[]string{"-mix", "new=1", "-ramp", "1:2:1s", "-rate", "5"}, "-ramp and -steps need -mix and no -rate"},
		{[]string{"-mix", "new=1", "-ramp", "1:2:1s", "-steps", "1:1s"}, "-ramp and -steps exclude each other"},
		{[]string{"-write-jwks", "j.json"}, "-write-jwks needs -key-file"},
		{[]string{"-serve-jwks"}, "-serve-jwks needs -jwks-listen"},
		{[]string{"-write-tokens", "t.json", "-tokens", "0"}, "-tokens must be in [1, 1000000]"},
		{[]string{"-mix", "new=1", "-client", "grpc-go"}, "-mix speaks through connect-go"},
	} {
		if _, err := parseFlags(c.args, io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

// -register print prints the admin CLI call an operator runs, quoted for a
// shell, and changes nothing.
func TestRegisterCommand(t *testing.T) {
	got := registerCommand("https://pactd.staging.example:443", "https://pa.staging.example:8443",
		"https://pa.staging.example:8443/jwks.json", tlsOpts{caFile: "ca dir/ca.pem"})
	want := "pactd agent register -addr https://pactd.staging.example:443 -ca 'ca dir/ca.pem' -issuer https://pa.staging.example:8443 " +
		"-jwks-uri https://pa.staging.example:8443/jwks.json -name 'pactd-loadgen PA'"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
