package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// report is what one failover run measured.
type report struct {
	Sync bool

	mu     sync.Mutex
	writes []write
	verifs []verification

	holdAt, stopAt, downAt, promoteAt, promotedAt, endAt time.Time

	// checked: acknowledged writes found afterwards, and those missing.
	found   map[string]int
	missing []write

	metrics []replicaMetrics
	logs    []logLine
}

type replicaMetrics struct {
	replica string
	values  map[string]string
}

func (r *report) addWrite(w write) { r.mu.Lock(); r.writes = append(r.writes, w); r.mu.Unlock() }

func (r *report) addVerification(v verification) {
	r.mu.Lock()
	r.verifs = append(r.verifs, v)
	r.mu.Unlock()
}

func (r *report) lost() int { return len(r.missing) }

// checkWrites looks every acknowledged write up on the new primary
// through replica a: each credential must be listed, each grant's token
// must introspect active. Reads are retried while the replica still
// reconnects.
func (r *report) checkWrites(ctx context.Context, a *replica) error {
	ids, err := retry(ctx, func(ctx context.Context) (map[string]bool, error) {
		ids := map[string]bool{}
		page := ""
		for {
			resp, err := a.creds.ListCredentials(ctx, &pactv1.ListCredentialsRequest{Page: &pactv1.PageRequest{PageSize: 500, PageToken: page}})
			if err != nil {
				return nil, err
			}
			for _, c := range resp.GetCredentials() {
				ids[c.GetId()] = true
			}
			if page = resp.GetNextPageToken(); page == "" {
				return ids, nil
			}
		}
	})
	if err != nil {
		return fmt.Errorf("list credentials after the failover: %w", err)
	}
	r.found = map[string]int{}
	for _, w := range r.writes {
		if !w.ok {
			continue
		}
		present := ids[w.id]
		if w.kind == "grant" {
			present, err = retry(ctx, func(ctx context.Context) (bool, error) {
				resp, err := a.tokens.IntrospectToken(ctx, &pactv1.IntrospectTokenRequest{Token: w.token, BrandId: brandID})
				return resp.GetActive(), err
			})
			if err != nil {
				return fmt.Errorf("introspect a grant after the failover: %w", err)
			}
		}
		if present {
			r.found[w.kind]++
		} else {
			r.missing = append(r.missing, w)
		}
	}
	return nil
}

func retry[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		cctx, cancel := context.WithTimeout(ctx, rpcTimeout)
		v, err := f(cctx)
		cancel()
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return v, err
		}
		pause(ctx, 200*time.Millisecond)
	}
}

// writesBack is the first write acknowledged that started once the
// primary was down (pg_ctl stop had returned).
func (r *report) writesBack() (write, bool) {
	var first write
	ok := false
	for _, w := range r.writes {
		if w.ok && w.start.After(r.downAt) && (!ok || w.end.Before(first.end)) {
			first, ok = w, true
		}
	}
	return first, ok
}

type rate struct{ ok, all int }

func (x rate) String() string {
	if x.all == 0 {
		return "— (none)"
	}
	return fmt.Sprintf("%.1f %% (%d of %d)", 100*float64(x.ok)/float64(x.all), x.ok, x.all)
}

func (r *report) verifRate(from, to time.Time, delegated *bool) rate {
	var x rate
	for _, v := range r.verifs {
		if v.start.Before(from) || !v.start.Before(to) || (delegated != nil && v.delegated != *delegated) {
			continue
		}
		x.all++
		if v.ok {
			x.ok++
		}
	}
	return x
}

// slowest is the longest verification that started in [from, to).
func (r *report) slowest(from, to time.Time) time.Duration {
	var d time.Duration
	for _, v := range r.verifs {
		if !v.start.Before(from) && v.start.Before(to) {
			d = max(d, v.end.Sub(v.start))
		}
	}
	return d
}

func (r *report) writeRate(from, to time.Time) rate {
	var x rate
	for _, w := range r.writes {
		if w.start.Before(from) || !w.start.Before(to) {
			continue
		}
		x.all++
		if w.ok {
			x.ok++
		}
	}
	return x
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// writeReport writes the Markdown report of the runs.
func writeReport(b *strings.Builder, sc scenario, rs []*report, args []string) {
	cmd := "(cd bench && go run ./cmd/pactd-failover"
	if len(args) > 0 {
		cmd += " " + strings.Join(args, " ")
	}
	cmd += ")"
	lag := ""
	if sc.Lag > 0 {
		lag = fmt.Sprintf(" The primary's WAL sender was stopped (SIGSTOP) %v before the primary died, and killed with it: the standby was that far behind.", sc.Lag)
	}
	fmt.Fprintf(b, "Command: `%s`. Load: %d writers (alternating a caller credential and a whole delegation grant, 10 ms apart), %d verifiers (alternating identity-only and delegated `VerifyAgentRequest`, 5 ms apart), on two pactd replicas whose `PACT_DATABASE_URL` names both servers with `target_session_attrs=read-write`. Timeline: %v of load, primary stopped (`pg_ctl stop -m immediate`), standby promoted %v later, %v more load. fsync %v.%s\n\n",
		cmd, sc.Writers, sc.Verifiers, sc.Before, sc.PromoteAfter, sc.After, onOff(sc.Fsync), lag)
	b.WriteString("| | " + strings.Join(names(rs), " | ") + " |\n|---|" + strings.Repeat("---|", len(rs)) + "\n")
	row := func(label string, f func(r *report) string) {
		cells := make([]string, len(rs))
		for i, r := range rs {
			cells[i] = f(r)
		}
		fmt.Fprintf(b, "| %s | %s |\n", label, strings.Join(cells, " | "))
	}
	yes, no := true, false
	row("writes acknowledged (credentials + grants)", func(r *report) string {
		return fmt.Sprintf("%d (%d + %d)", r.found["credential"]+r.found["grant"]+len(r.missing), count(r.writes, "credential"), count(r.writes, "grant"))
	})
	row("**acknowledged writes lost**", func(r *report) string { return fmt.Sprintf("**%d**", r.lost()) })
	row("writes attempted / failed", func(r *report) string {
		x := r.writeRate(time.Time{}, r.endAt)
		return fmt.Sprintf("%d / %d", x.all, x.all-x.ok)
	})
	row("writes succeed again, from the stop", func(r *report) string {
		w, ok := r.writesBack()
		if !ok {
			return "never"
		}
		return secs(w.end.Sub(r.stopAt))
	})
	row("… from the promotion's start / end", func(r *report) string {
		w, ok := r.writesBack()
		if !ok {
			return "never"
		}
		return secs(w.end.Sub(r.promoteAt)) + " / " + secs(w.end.Sub(r.promotedAt))
	})
	row("stop took (`pg_ctl stop -m immediate -w`) / promotion took (`pg_ctl promote -w`)", func(r *report) string {
		return secs(r.downAt.Sub(r.stopAt)) + " / " + secs(r.promotedAt.Sub(r.promoteAt))
	})
	row("verification success, whole run", func(r *report) string { return r.verifRate(time.Time{}, r.endAt, nil).String() })
	row("… from the stop until writes succeed again", func(r *report) string {
		w, _ := r.writesBack()
		return r.verifRate(r.stopAt, w.end, nil).String()
	})
	row("… of which identity-only", func(r *report) string {
		w, _ := r.writesBack()
		return r.verifRate(r.stopAt, w.end, &no).String()
	})
	row("… of which delegated", func(r *report) string {
		w, _ := r.writesBack()
		return r.verifRate(r.stopAt, w.end, &yes).String()
	})
	for _, m := range reportedMetrics {
		row("`"+m+"` (A; B)", func(r *report) string {
			var parts []string
			for _, rm := range r.metrics {
				var vs []string
				for k, v := range rm.values {
					if strings.HasPrefix(k, m) {
						vs = append(vs, strings.TrimPrefix(k, m)+v)
					}
				}
				sort.Strings(vs)
				parts = append(parts, strings.Join(vs, ", "))
			}
			return strings.Join(parts, "; ")
		})
	}
	for _, r := range rs {
		fmt.Fprintf(b, "\n#### %s replication: per second (t = 0 at the stop; the promotion started at %s)\n\n", modeName(r.Sync), secs(r.promoteAt.Sub(r.stopAt)))
		b.WriteString("| second | writes ok / tried | identity verifications ok / tried | delegated ok / tried | slowest verification |\n|---|---|---|---|---|\n")
		for t := r.writes0().Truncate(time.Second); t.Before(r.endAt); t = t.Add(time.Second) {
			off := t.Sub(r.stopAt).Round(time.Second)
			w := r.writeRate(t, t.Add(time.Second))
			vi := r.verifRate(t, t.Add(time.Second), &no)
			vd := r.verifRate(t, t.Add(time.Second), &yes)
			fmt.Fprintf(b, "| %+d | %d / %d | %d / %d | %d / %d | %s |\n", int(off.Seconds()), w.ok, w.all, vi.ok, vi.all, vd.ok, vd.all,
				r.slowest(t, t.Add(time.Second)).Round(time.Millisecond))
		}
		if len(r.missing) > 0 {
			first, last := r.missing[0].end, r.missing[0].end
			kinds := map[string]int{}
			for _, m := range r.missing {
				kinds[m.kind]++
				first, last = minTime(first, m.end), maxTime(last, m.end)
			}
			fmt.Fprintf(b, "\nLost: %d credentials and %d grants, acknowledged from %s to %s.\n", kinds["credential"], kinds["grant"],
				secs(first.Sub(r.stopAt)), secs(last.Sub(r.stopAt)))
		}
		fmt.Fprintf(b, "\n%s replication: pactd's log lines (warnings, errors and the change feed's lines; identical lines counted, t from the stop):\n\n```\n", modeName(r.Sync))
		type key struct{ replica, level, msg, detail string }
		counts := map[key]int{}
		first := map[key]time.Time{}
		var order []key
		for _, l := range r.logs {
			d := l.detail
			if len(d) > 160 {
				d = d[:160] + "…"
			}
			k := key{l.replica, l.level, l.msg, d}
			if counts[k] == 0 {
				order = append(order, k)
				first[k] = l.at
			}
			counts[k]++
		}
		sort.SliceStable(order, func(i, j int) bool { return first[order[i]].Before(first[order[j]]) })
		for _, k := range order {
			fmt.Fprintf(b, "%+7.2fs %s %-5s ×%-3d %s %s\n", first[k].Sub(r.stopAt).Seconds(), k.replica, k.level, counts[k], k.msg, k.detail)
		}
		if len(order) == 0 {
			b.WriteString("(none)\n")
		}
		b.WriteString("```\n")
	}
}

func (r *report) writes0() time.Time {
	t := r.stopAt
	for _, w := range r.writes {
		if w.start.Before(t) {
			t = w.start
		}
	}
	return t
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func names(rs []*report) []string {
	var out []string
	for _, r := range rs {
		out = append(out, modeName(r.Sync)+" replication")
	}
	return out
}

func count(ws []write, kind string) int {
	n := 0
	for _, w := range ws {
		if w.ok && w.kind == kind {
			n++
		}
	}
	return n
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
