package cert

import (
	"testing"
	"time"

	"pactd.dev/pactd/hdtp/wire"
)

// TestChainRefusals runs the hostile chain cases of hdtp.md §8 (items 1 to
// 14, numbered in the names): each refused at its rule for its reason,
// beside the accepted controls of the same group.
func TestChainRefusals(t *testing.T) {
	f := newFixture(t, Ed25519, Ed25519)
	other := newFixture(t, Ed25519, Ed25519)
	issue := func(t *testing.T, f *fixture, mod func(*LeafTemplate)) []byte {
		t.Helper()
		tmpl := f.leafTemplate()
		if mod != nil {
			mod(&tmpl)
		}
		p, err := tmpl.Parts(f.root)
		if err != nil {
			t.Fatal(err)
		}
		return mustSign(t, p, f.rootKey)
	}
	leaf := issue(t, f, nil)
	flipped := append([]byte(nil), f.rootDER...)
	flipped[len(flipped)-1] ^= 1
	// A "root" that is an intermediate: of the root profile, but signed by
	// another root's key.
	inter := func() []byte {
		p := f.rootParts(t)
		p.Issuer = NameElement("Someone Else")
		return mustSign(t, p, other.rootKey)
	}()
	akiOther := func() []byte {
		p := f.leafParts(t)
		p.Extensions[5].Value = element(0x30, element(0x80, other.root.KeyID[:]))
		return mustSign(t, p, f.rootKey)
	}()
	day := 24 * time.Hour
	span := func(d time.Duration) func(*LeafTemplate) {
		return func(l *LeafTemplate) { l.NotAfter = l.NotBefore.Add(d) }
	}
	wrongRoot := other.root.KeyID

	type tc struct {
		name     string
		chain    [][]byte
		gen      wire.Generation
		now      time.Time
		root     *wire.KeyID
		endpoint string
		rule     int
		reason   Reason // "" with rule 0: accepted
	}
	cases := []tc{
		{name: "control", chain: [][]byte{leaf, f.rootDER}},
		{name: "control with expectations", chain: [][]byte{leaf, f.rootDER}, root: &f.root.KeyID, endpoint: testEndpoint},
		{name: "1 a lone leaf", chain: [][]byte{leaf}, rule: 1, reason: ReasonChainLength},
		{name: "1 no certificate", chain: nil, rule: 1, reason: ReasonChainLength},
		{name: "1 three certificates", chain: [][]byte{leaf, f.rootDER, f.rootDER}, rule: 1, reason: ReasonChainLength},
		{name: "1 a lone root", chain: [][]byte{f.rootDER}, rule: 1, reason: ReasonChainLength},
		{name: "2 root then leaf", chain: [][]byte{f.rootDER, leaf}, rule: 1, reason: ReasonNotALeaf},
		{name: "2 root twice", chain: [][]byte{f.rootDER, f.rootDER}, rule: 1, reason: ReasonNotALeaf},
		{name: "2 leaf twice", chain: [][]byte{leaf, leaf}, rule: 1, reason: ReasonNotARoot},
		{name: "3 leaf under another root", chain: [][]byte{leaf, other.rootDER}, rule: 3, reason: ReasonAKIMismatch},
		{name: "4 root signature bit flipped", chain: [][]byte{leaf, flipped}, rule: 2, reason: ReasonRootSignature},
		{name: "5 an intermediate as the root", chain: [][]byte{leaf, inter}, rule: 2, reason: ReasonRootSignature},
		{name: "6 AKI naming another key", chain: [][]byte{akiOther, f.rootDER}, rule: 3, reason: ReasonAKIMismatch},
		{name: "root not the expected one", chain: [][]byte{leaf, f.rootDER}, root: &wrongRoot, rule: 2, reason: ReasonRootMismatch},
		{name: "7 expired leaf", chain: [][]byte{leaf, f.rootDER}, now: testNotAfter.Add(day), rule: 4, reason: ReasonLeafExpired},
		{name: "8 notBefore an hour ahead", chain: [][]byte{issue(t, f, func(l *LeafTemplate) { l.NotBefore = testNow.Add(time.Hour) }), f.rootDER},
			rule: 4, reason: ReasonLeafNotYetValid},
		{name: "9 398 days and a second", chain: [][]byte{issue(t, f, span(398*day+time.Second)), f.rootDER}, rule: 4, reason: ReasonLeafSpan},
		{name: "9 exactly 398 days", chain: [][]byte{issue(t, f, span(398*day)), f.rootDER}},
		{name: "10 now at notAfter", chain: [][]byte{leaf, f.rootDER}, now: testNotAfter},
		{name: "10 a second after notAfter", chain: [][]byte{leaf, f.rootDER}, now: testNotAfter.Add(time.Second), rule: 4, reason: ReasonLeafExpired},
		{name: "now at notBefore", chain: [][]byte{leaf, f.rootDER}, now: testNotBefore},
		{name: "11 root newer than its leaf", chain: [][]byte{issue(t, f, func(l *LeafTemplate) { l.NotBefore = testNotBefore.Add(-time.Hour) }), f.rootDER}},
		{name: "endpoint not the one expected", chain: [][]byte{leaf, f.rootDER}, endpoint: "https://agent.alina.example/other", rule: 5, reason: ReasonEndpointMismatch},
	}
	// 12, 13: a root with an end date.
	ended := func() *fixture {
		g := &fixture{rootKey: newKey(t, Ed25519), leafKey: newKey(t, Ed25519)}
		tmpl := g.rootTemplate()
		tmpl.NotAfter = time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC)
		der, err := NewRoot(g.rootKey, tmpl)
		if err != nil {
			t.Fatal(err)
		}
		g.rootDER = der
		if g.root, err = Parse(der, KindRoot, wire.HDTP1); err != nil {
			t.Fatal(err)
		}
		return g
	}()
	shortLeaf := issue(t, ended, func(l *LeafTemplate) { l.NotAfter = time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC) })
	longLeaf := issue(t, ended, nil) // ends 2027-09-01, after its root
	cases = append(cases,
		tc{name: "12 HDTP root with an end date, control", chain: [][]byte{shortLeaf, ended.rootDER}, gen: wire.HDTP1},
		tc{name: "12 HDTP root past its end", chain: [][]byte{shortLeaf, ended.rootDER}, gen: wire.HDTP1,
			now: time.Date(2027, 6, 1, 0, 0, 1, 0, time.UTC), rule: 4, reason: ReasonRootExpired},
		tc{name: "12 HDTP leaf outliving its root", chain: [][]byte{longLeaf, ended.rootDER}, gen: wire.HDTP1, rule: 4, reason: ReasonLeafOutlivesRoot},
		tc{name: "13 PACT root with an end date", chain: [][]byte{shortLeaf, ended.rootDER}, gen: wire.PACT2, rule: 1, reason: ReasonRootEndDate},
		tc{name: "13 PACT leaf outliving nothing", chain: [][]byte{leaf, f.rootDER}, gen: wire.PACT2},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gen, now := c.gen, c.now
			if gen == 0 {
				gen = wire.HDTP1
			}
			if now.IsZero() {
				now = testNow
			}
			_, err := VerifyChain(c.chain, ChainOptions{Generation: gen, Now: now, ExpectedRoot: c.root, ExpectedEndpoint: c.endpoint})
			if c.reason == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if RuleOf(err) != c.rule || ReasonOf(err) != c.reason {
				t.Fatalf("err = %v, want rule %d %s", err, c.rule, c.reason)
			}
		})
	}
}

// TestFollowRenewed covers hdtp.md §8 item 14: a certificate_renewed chain
// for another address, another root or an older leaf is discarded; a
// renewal at the dialed address is followed.
func TestFollowRenewed(t *testing.T) {
	f := newFixture(t, Ed25519, Ed25519)
	other := newFixture(t, Ed25519, Ed25519)
	pinned, err := IssueLeaf(f.root, f.rootKey, f.leafTemplate())
	if err != nil {
		t.Fatal(err)
	}
	pin, _ := Parse(pinned, KindLeaf, wire.HDTP1)
	renew := func(mod func(*LeafTemplate), g *fixture) []byte {
		tmpl := g.leafTemplate()
		tmpl.PublicKey = newKey(t, Ed25519).Public()
		tmpl.NotBefore = testNotBefore.Add(24 * time.Hour)
		tmpl.NotAfter = tmpl.NotBefore.Add(365 * 24 * time.Hour)
		if mod != nil {
			mod(&tmpl)
		}
		der, err := IssueLeaf(g.root, g.rootKey, tmpl)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	cases := []struct {
		name   string
		chain  [][]byte
		follow bool
		reason Reason
	}{
		{"a renewal", [][]byte{renew(nil, f), f.rootDER}, true, ""},
		{"the pinned leaf again", [][]byte{pinned, f.rootDER}, true, ""},
		{"another address", [][]byte{renew(func(l *LeafTemplate) { l.Endpoint = "https://elsewhere.example/mcp" }, f), f.rootDER}, false, ReasonEndpointMismatch},
		{"another root", [][]byte{renew(nil, other), other.rootDER}, false, ReasonRootMismatch},
		{"an older leaf", [][]byte{renew(func(l *LeafTemplate) { l.NotBefore = testNotBefore.Add(-time.Hour) }, f), f.rootDER}, false, ReasonNotNewer},
	}
	for _, c := range cases {
		_, err := FollowRenewed(pin, testEndpoint, c.chain, wire.HDTP1, testNow.Add(48*time.Hour))
		if (err == nil) != c.follow || ReasonOf(err) != c.reason {
			t.Errorf("%s: err = %v, want follow=%v %s", c.name, err, c.follow, c.reason)
		}
	}
}
