package main

import (
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"os"
	"strings"
)

// summary is a -mix run's result: the -json document and the data of the
// -html report. Latencies are milliseconds, from each request's due time in
// open loop (no coordinated omission) and from its send in closed loop.
type summary struct {
	Tool         string         `json:"tool"`
	Target       string         `json:"target"`
	VerifyTarget string         `json:"verify_target"`
	Protocol     string         `json:"protocol"`
	Codec        string         `json:"codec"`
	HTTP         string         `json:"http"`
	Brand        string         `json:"brand"`
	Issuer       string         `json:"pa_issuer"`
	Mix          map[string]int `json:"mix"`
	MixOrder     []string       `json:"-"`
	Loop         string         `json:"loop"`
	RateShape    string         `json:"rate_shape,omitempty"`
	Workers      int            `json:"workers"`
	Conns        int            `json:"conns"`
	Started      string         `json:"started"`
	DurationS    float64        `json:"duration_s"`
	IntervalS    float64        `json:"interval_s"`
	WallS        float64        `json:"wall_s"`
	GOMAXPROCS   int            `json:"gomaxprocs"`
	LoadAverage  string         `json:"load_average"`
	// Requests answered (or timed out) and the failures among them and the
	// unsent, by kind and label.
	Requests   int64                  `json:"requests"`
	Errors     int64                  `json:"errors"`
	Throughput float64                `json:"throughput_per_s"`
	Latency    latencySummary         `json:"latency"`
	ByKind     map[string]kindSummary `json:"by_kind"`
	Failures   []labelCount           `json:"errors_by_kind"`
	// Late counts open-loop requests sent more than 1 ms after they were
	// due; SendLagP99 is the 99th percentile of that lag.
	Late        int64      `json:"late"`
	SendLagP99  float64    `json:"send_lag_p99_ms"`
	Mint        mintReport `json:"mint"`
	ClientCPU   float64    `json:"client_cpu_cores"`
	JWKSFetches int64      `json:"jwks_fetches"`
	// Valid: no more errors than -max-errors, and at least one request.
	Valid     bool            `json:"valid"`
	Intervals []intervalStats `json:"intervals"`
}

// kindSummary is one request kind's totals.
type kindSummary struct {
	Requests int64 `json:"requests"`
	Errors   int64 `json:"errors"`
	latencySummary
}

// mintReport is what signing PA tokens during the run cost, so a run the
// tool itself limited is never mistaken for pactd's limit.
type mintReport struct {
	Tokens         int64   `json:"tokens"`
	MicrosPerToken float64 `json:"us_per_token"`
	// CeilingPerS is the tokens/s the tool could mint on all its threads.
	CeilingPerS float64 `json:"ceiling_per_s"`
	PerSecond   float64 `json:"per_s"`
	// Share is PerSecond / CeilingPerS.
	Share float64 `json:"ceiling_share"`
}

func writeJSON(file string, s *summary) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(b, '\n'), 0o644)
}

// fmtMS formats milliseconds as the report and the console print them.
func fmtMS(v float64) string { return fmt.Sprintf("%.3f", v) }

// series is one plotted line.
type series struct {
	Name, Color, Points string
}

// plot is one inline SVG chart.
type plot struct {
	Title, Unit    string
	W, H           int
	Series         []series
	YTicks, XTicks []tick
	Log            bool
}

// tick is an axis label at a position.
type tick struct {
	Pos   float64
	Label string
}

// Plot geometry: the drawing area inside the SVG.
const (
	plotW, plotH             = 900, 300
	padL, padR, padT, padB   = 70, 20, 20, 40
	innerW, innerH           = plotW - padL - padR, plotH - padT - padB
	maxPlotPoints            = 2000
	latencyFloorMS           = 0.01
	throughputHeadroomFactor = 1.1
)

// xTicks labels the time axis with about six ticks.
func xTicks(dur float64) []tick {
	if dur <= 0 {
		return nil
	}
	step := niceStep(dur / 6)
	var out []tick
	for t := 0.0; t <= dur+1e-9; t += step {
		out = append(out, tick{padL + innerW*t/dur, fmtSeconds(t)})
	}
	return out
}

func fmtSeconds(t float64) string {
	switch {
	case t >= 3600:
		return fmt.Sprintf("%.1fh", t/3600)
	case t >= 120:
		return fmt.Sprintf("%.0fm", t/60)
	}
	return fmt.Sprintf("%.0fs", t)
}

// niceStep rounds v up to 1, 2 or 5 times a power of ten.
func niceStep(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// points samples (t, v) pairs into an SVG polyline, at most maxPlotPoints
// (the largest value of each bucket, so a spike is never averaged away).
func points(iv []intervalStats, dur float64, y func(intervalStats) float64, scale func(float64) float64) string {
	if len(iv) == 0 || dur <= 0 {
		return ""
	}
	per := max(1, (len(iv)+maxPlotPoints-1)/maxPlotPoints)
	var b strings.Builder
	for i := 0; i < len(iv); i += per {
		v, t := 0.0, iv[i].Start
		for j := i; j < min(i+per, len(iv)); j++ {
			v = max(v, y(iv[j]))
		}
		fmt.Fprintf(&b, "%.1f,%.1f ", padL+innerW*t/dur, padT+innerH*(1-scale(v)))
	}
	return strings.TrimSpace(b.String())
}

func latencyPlot(s *summary) plot {
	hi := latencyFloorMS * 10
	for _, iv := range s.Intervals {
		hi = max(hi, iv.Max)
	}
	lo := latencyFloorMS
	for _, iv := range s.Intervals {
		if iv.Requests > 0 && iv.P50 > 0 {
			lo = max(latencyFloorMS, math.Min(iv.P50, hi)/2)
			break
		}
	}
	for _, iv := range s.Intervals {
		if iv.Requests > 0 && iv.P50 > 0 {
			lo = math.Min(lo, max(latencyFloorMS, iv.P50/2))
		}
	}
	llo, lhi := math.Log10(lo), math.Log10(hi*1.2)
	scale := func(v float64) float64 {
		if v <= lo {
			return 0
		}
		return (math.Log10(v) - llo) / (lhi - llo)
	}
	dur := max(s.WallS, s.DurationS)
	p := plot{Title: "Latency per interval (ms, log scale)", Unit: "ms", W: plotW, H: plotH, XTicks: xTicks(dur), Log: true}
	for _, c := range []struct {
		name, color string
		f           func(intervalStats) float64
	}{
		{"p50", "#1b9e77", func(i intervalStats) float64 { return i.P50 }},
		{"p90", "#7570b3", func(i intervalStats) float64 { return i.P90 }},
		{"p99", "#d95f02", func(i intervalStats) float64 { return i.P99 }},
		{"p99.9", "#e7298a", func(i intervalStats) float64 { return i.P999 }},
		{"max", "#666666", func(i intervalStats) float64 { return i.Max }},
	} {
		p.Series = append(p.Series, series{c.name, c.color, points(s.Intervals, dur, c.f, scale)})
	}
	for e := math.Floor(llo); e <= math.Ceil(lhi); e++ {
		v := math.Pow(10, e)
		if f := scale(v); f >= 0 && f <= 1 && v >= lo {
			p.YTicks = append(p.YTicks, tick{padT + innerH*(1-f), trimFloat(v)})
		}
	}
	return p
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

func throughputPlot(s *summary) plot {
	hi := 1.0
	for _, iv := range s.Intervals {
		hi = max(hi, iv.Throughput, iv.TargetRate)
	}
	hi *= throughputHeadroomFactor
	scale := func(v float64) float64 { return v / hi }
	dur := max(s.WallS, s.DurationS)
	p := plot{Title: "Throughput per interval (answered requests/s)", Unit: "/s", W: plotW, H: plotH, XTicks: xTicks(dur)}
	p.Series = append(p.Series, series{"answered/s", "#1f78b4", points(s.Intervals, dur, func(i intervalStats) float64 { return i.Throughput }, scale)})
	if s.Loop == "open" {
		p.Series = append(p.Series, series{"target/s", "#b2df8a", points(s.Intervals, dur, func(i intervalStats) float64 { return i.TargetRate }, scale)})
	}
	p.Series = append(p.Series, series{"errors/s", "#e31a1c", points(s.Intervals, dur, func(i intervalStats) float64 { return float64(i.Errors) / max(s.IntervalS, 1e-9) }, scale)})
	step := niceStep(hi / 5)
	for v := 0.0; v <= hi; v += step {
		p.YTicks = append(p.YTicks, tick{padT + innerH*(1-scale(v)), trimFloat(v)})
	}
	return p
}

// kindRow is one line of the per-kind table.
type kindRow struct {
	Kind   string
	Weight int
	kindSummary
}

func writeHTML(file string, s *summary) error {
	var rows []kindRow
	for _, k := range allKinds {
		if ks, ok := s.ByKind[k]; ok {
			rows = append(rows, kindRow{k, s.Mix[k], ks})
		}
	}
	data := struct {
		S                                             *summary
		Mix                                           string
		Kinds                                         []kindRow
		Plots                                         []plot
		InnerX, InnerY, InnerW, InnerH, Right, Bottom int
	}{s, s.mixString(), rows, []plot{latencyPlot(s), throughputPlot(s)}, padL, padT, innerW, innerH, padL + innerW, padT + innerH}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := reportTemplate.Execute(f, data); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{"ms": fmtMS, "inc": func(i int) int { return i + 1 }}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>pactd-loadgen report {{.S.Started}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:960px}
table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f4f4f4}td.l,th.l{text-align:left}.bad{color:#b00020;font-weight:bold}.ok{color:#1b7e3c;font-weight:bold}
svg{background:#fff;border:1px solid #ddd;margin:6px 0}.legend span{margin-right:14px}
</style></head>
<body>
<h1>pactd-loadgen report</h1>
<p id="verdict" class="{{if .S.Valid}}ok{{else}}bad{{end}}">{{if .S.Valid}}VALID{{else}}INVALID{{end}}: {{.S.Requests}} requests, {{.S.Errors}} errors</p>
<table id="run">
<tr><th class="l">started</th><td class="l">{{.S.Started}}</td></tr>
<tr><th class="l">target</th><td class="l">{{.S.VerifyTarget}} ({{.S.Protocol}}, {{.S.Codec}}, HTTP {{.S.HTTP}})</td></tr>
<tr><th class="l">mix</th><td class="l">{{.Mix}}</td></tr>
<tr><th class="l">load</th><td class="l">{{if eq .S.Loop "open"}}open loop, {{.S.RateShape}}{{else}}closed loop{{end}}, {{.S.Workers}} workers, {{.S.Conns}} connections</td></tr>
<tr><th class="l">duration</th><td class="l">{{printf "%.0f" .S.DurationS}} s asked, {{printf "%.2f" .S.WallS}} s wall, intervals of {{printf "%g" .S.IntervalS}} s</td></tr>
<tr><th class="l">client</th><td class="l">GOMAXPROCS {{.S.GOMAXPROCS}}, load average {{.S.LoadAverage}}, CPU {{printf "%.2f" .S.ClientCPU}} cores</td></tr>
<tr><th class="l">throughput</th><td class="l" id="throughput">{{printf "%.1f" .S.Throughput}}/s</td></tr>
<tr><th class="l">minting</th><td class="l">{{.S.Mint.Tokens}} tokens, {{printf "%.1f" .S.Mint.MicrosPerToken}} µs each, ceiling {{printf "%.0f" .S.Mint.CeilingPerS}}/s ({{printf "%.1f" .S.Mint.Share}} of it used)</td></tr>
{{if eq .S.Loop "open"}}<tr><th class="l">send lag</th><td class="l">p99 {{ms .S.SendLagP99}} ms; {{.S.Late}} requests sent &gt; 1 ms late</td></tr>{{end}}
</table>
<h2>Latency (ms, from each request's due time)</h2>
<table id="latency">
<tr><th class="l">kind</th><th>weight</th><th>requests</th><th>errors</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th></tr>
<tr><td class="l"><b>all</b></td><td></td><td>{{.S.Requests}}</td><td>{{.S.Errors}}</td><td id="p50">{{ms .S.Latency.P50}}</td><td id="p90">{{ms .S.Latency.P90}}</td><td id="p99">{{ms .S.Latency.P99}}</td><td id="p999">{{ms .S.Latency.P999}}</td><td id="max">{{ms .S.Latency.Max}}</td></tr>
{{range .Kinds}}<tr><td class="l">{{.Kind}}</td><td>{{.Weight}}</td><td>{{.Requests}}</td><td>{{.Errors}}</td><td>{{ms .P50}}</td><td>{{ms .P90}}</td><td>{{ms .P99}}</td><td>{{ms .P999}}</td><td>{{ms .Max}}</td></tr>
{{end}}</table>
<h2>Errors by kind</h2>
{{if .S.Failures}}<table id="errors"><tr><th class="l">kind: outcome</th><th>count</th></tr>
{{range .S.Failures}}<tr><td class="l">{{.Label}}</td><td>{{.Count}}</td></tr>
{{end}}</table>{{else}}<p id="errors">none</p>{{end}}
{{range .Plots}}
<h2>{{.Title}}</h2>
<div class="legend">{{range .Series}}<span style="color:{{.Color}}">&#9632; {{.Name}}</span>{{end}}</div>
<svg class="plot" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="{{.Title}}">
<rect x="{{$.InnerX}}" y="{{$.InnerY}}" width="{{$.InnerW}}" height="{{$.InnerH}}" fill="none" stroke="#999"/>
{{range .YTicks}}<line x1="{{$.InnerX}}" x2="{{$.Right}}" y1="{{.Pos}}" y2="{{.Pos}}" stroke="#eee"/><text x="{{$.InnerX}}" dx="-6" y="{{.Pos}}" dy="4" font-size="11" text-anchor="end">{{.Label}}</text>
{{end}}{{range .XTicks}}<text x="{{.Pos}}" y="{{$.Bottom}}" dy="16" font-size="11" text-anchor="middle">{{.Label}}</text>
{{end}}{{range .Series}}<polyline class="series" data-name="{{.Name}}" fill="none" stroke="{{.Color}}" stroke-width="1.5" points="{{.Points}}"/>
{{end}}</svg>
{{end}}
<h2>Intervals</h2>
<table id="intervals"><tr><th>t (s)</th><th>requests</th><th>errors</th><th>/s</th>{{if eq .S.Loop "open"}}<th>target /s</th>{{end}}<th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th></tr>
{{range .S.Intervals}}<tr><td>{{printf "%g" .Start}}</td><td>{{.Requests}}</td><td>{{.Errors}}</td><td>{{printf "%.0f" .Throughput}}</td>{{if eq $.S.Loop "open"}}<td>{{printf "%.0f" .TargetRate}}</td>{{end}}<td>{{ms .P50}}</td><td>{{ms .P90}}</td><td>{{ms .P99}}</td><td>{{ms .P999}}</td><td>{{ms .Max}}</td></tr>
{{end}}</table>
<script>
// Rendering check (no network, nothing loaded): record how many plotted
// lines have a laid-out extent, which only a browser that drew the SVG knows.
addEventListener("load", function () {
  var drawn = 0;
  document.querySelectorAll("polyline.series").forEach(function (p) {
    var b = p.getBBox();
    if (b.width > 0) drawn++;
  });
  document.body.setAttribute("data-rendered-series", String(drawn));
});
</script>
</body></html>
`))
