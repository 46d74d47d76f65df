package hdtp

import (
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/hdtp/card"
	"pactd.dev/pactd/hdtp/hdtptest"
	"pactd.dev/pactd/hdtp/wire"
)

func vectors(t *testing.T, gen wire.Generation) *hdtptest.Vectors {
	t.Helper()
	v, err := hdtptest.Load(gen)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

var protoGen = map[wire.Generation]hdtpv1.Generation{wire.PACT2: hdtpv1.Generation_GENERATION_PACT2, wire.HDTP1: hdtpv1.Generation_GENERATION_HDTP1}

// TestValidateChainVectors runs every published chain case of both
// generations through the RPC: accepted cases are valid, refused ones
// carry the vectors' rule and, by context, envelope_invalid, bad_request
// or no code.
func TestValidateChainVectors(t *testing.T) {
	f := newFixture(t, "", nil)
	for _, gen := range []wire.Generation{wire.PACT2, wire.HDTP1} {
		v := vectors(t, gen)
		for _, tc := range v.ChainCases {
			now, _ := time.Parse(time.RFC3339, tc.Now)
			for ctxName, want := range map[hdtpv1.ChainContext]string{
				hdtpv1.ChainContext_CHAIN_CONTEXT_UNSPECIFIED: "envelope_invalid", hdtpv1.ChainContext_CHAIN_CONTEXT_CARD: "bad_request",
				hdtpv1.ChainContext_CHAIN_CONTEXT_TRANSPORT: "",
			} {
				resp, err := f.trust.ValidateChain(t.Context(), &hdtpv1.ValidateChainRequest{Generation: protoGen[gen], Chain: v.Chain(tc.Chain...),
					ExpectedRoot: tc.ExpectedRoot, ExpectedEndpoint: tc.ExpectedEndpoint, Time: timestamppb.New(now), Context: ctxName})
				if err != nil {
					t.Fatal(err)
				}
				switch tc.Expect {
				case "accept":
					if !resp.GetValid() || resp.GetLeaf().GetEndpoint() == "" || resp.GetLeaf().GetRootFingerprint() != resp.GetRoot().GetFingerprint() {
						t.Errorf("%s %s: %+v", gen, tc.Name, resp)
					}
				case "refuse":
					if resp.GetValid() || int(resp.GetRule()) != tc.Rule || resp.GetCode() != want || resp.GetReason() == "" {
						t.Errorf("%s %s (%s): %+v, want rule %d code %q", gen, tc.Name, ctxName, resp, tc.Rule, want)
					}
				}
			}
		}
	}
	if _, err := f.trust.ValidateChain(t.Context(), &hdtpv1.ValidateChainRequest{}); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("no generation: %v", err)
	}
	if _, err := f.trust.ValidateChain(t.Context(), &hdtpv1.ValidateChainRequest{Generation: hdtpv1.Generation_GENERATION_HDTP1, ExpectedRoot: "sha256:x"}); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("a malformed expected_root: %v", err)
	}
}

// TestCardHelpersVectors: the published signed card passes ParseCard and
// VerifyCardSignature with its chain; the refusals of hdtp.md §8 items 36,
// 38, 39, 43 and 44 come out with bad_request and their reasons.
func TestCardHelpersVectors(t *testing.T) {
	f := newFixture(t, "", nil)
	ctx := t.Context()
	v := vectors(t, wire.HDTP1)
	f.clock.Set(v.Now)
	sc := v.SignedCard
	hd := hdtpv1.Generation_GENERATION_HDTP1
	p, err := f.trust.ParseCard(ctx, &hdtpv1.ParseCardRequest{Generation: hd, Card: sc.Card, ResolvedAddresses: []string{"93.184.216.34"}})
	if err != nil || !p.GetValid() || p.GetLeaf().GetEndpoint() != "https://agent.alina.example/mcp" || p.GetSeal() != "required" || p.GetDisplayName() != "Alina Rao" ||
		p.GetLeaf().GetRootFingerprint() != "sha256:kfs9kG6xSsWaNtvWZsVnAWnGithg_HgKN4dbfWOGC1A" || p.GetLeafExpired() {
		t.Fatalf("ParseCard = %+v, %v", p, err)
	}
	chain := v.Chain("leaf_a", "root_a")
	ok, err := f.trust.VerifyCardSignature(ctx, &hdtpv1.VerifyCardSignatureRequest{Generation: hd, Card: sc.Card, CardSig: sc.CardSig, Chain: chain,
		ExpectedRoot: "sha256:kfs9kG6xSsWaNtvWZsVnAWnGithg_HgKN4dbfWOGC1A", ExpectedEndpoint: "https://agent.alina.example/mcp"})
	if err != nil || !ok.GetValid() {
		t.Fatalf("VerifyCardSignature = %+v, %v", ok, err)
	}
	for name, c := range map[string]struct {
		req  *hdtpv1.ParseCardRequest
		want string
		sub  string
	}{
		"a corrupted certificate": {&hdtpv1.ParseCardRequest{Generation: hd, Card: strings.Replace(sc.Card, "X-HDTP-CERT:", "X-HDTP-CERT:X", 1)}, "certificate", ""},
		"34 no certificate":       {&hdtpv1.ParseCardRequest{Generation: hd, Card: strings.Replace(sc.Card, "X-HDTP-CERT:", "X-HDTP-NOTE:", 1)}, "cert_missing", ""},
		"38 resolves loopback":    {&hdtpv1.ParseCardRequest{Generation: hd, Card: sc.Card, ResolvedAddresses: []string{"127.0.0.1"}}, "address", "not_public"},
		"38 resolves NAT64":       {&hdtpv1.ParseCardRequest{Generation: hd, Card: sc.Card, ResolvedAddresses: []string{"64:ff9b::7f00:1"}}, "address", "not_public"},
		"38 resolves 6to4":        {&hdtpv1.ParseCardRequest{Generation: hd, Card: sc.Card, ResolvedAddresses: []string{"2002:7f00:1::"}}, "address", "not_public"},
		"38 resolves mapped":      {&hdtpv1.ParseCardRequest{Generation: hd, Card: sc.Card, ResolvedAddresses: []string{"::ffff:10.0.0.1"}}, "address", "not_public"},
		"39 the receiver's own":   {&hdtpv1.ParseCardRequest{Generation: hd, Card: sc.Card, ReceiverEndpoint: "https://agent.alina.example/mcp"}, "own_endpoint", ""},
		"35 a PACT identity":      {&hdtpv1.ParseCardRequest{Generation: hdtpv1.Generation_GENERATION_PACT2, Card: sc.Card}, "other_generation", ""},
	} {
		got, err := f.trust.ParseCard(ctx, c.req)
		if err != nil || got.GetValid() || got.GetCode() != "bad_request" || got.GetReason() != c.want || got.GetAddressReason() != c.sub {
			t.Errorf("%s: %+v, %v", name, got, err)
		}
	}
	long, _ := f.trust.ParseCard(ctx, &hdtpv1.ParseCardRequest{Generation: hd, Card: mustCard(t, v, "leaf_a_long")})
	if long.GetReason() != "certificate" || long.GetCertificateReason() != "leaf_span" || long.GetCode() != "bad_request" {
		t.Errorf("36 a 404-day leaf: %+v", long)
	}
	expired, _ := f.trust.ParseCard(ctx, &hdtpv1.ParseCardRequest{Generation: hd, Card: mustCard(t, v, "leaf_a_expired")})
	if !expired.GetValid() || !expired.GetLeafExpired() {
		t.Errorf("37 an expired leaf is accepted: %+v", expired)
	}
	for name, c := range map[string]struct {
		req  *hdtpv1.VerifyCardSignatureRequest
		want string
	}{
		"43 LF line ends": {&hdtpv1.VerifyCardSignatureRequest{Generation: hd, Card: strings.ReplaceAll(sc.Card, "\r\n", "\n"), CardSig: sc.CardSig, Chain: chain}, "signature"},
		"44 the card's cert is not the chain's leaf": {&hdtpv1.VerifyCardSignatureRequest{Generation: hd, Card: sc.Card, CardSig: sc.CardSig,
			Chain: v.Chain("leaf_c", "root_c")}, "cert_mismatch"},
		"the chain of another root": {&hdtpv1.VerifyCardSignatureRequest{Generation: hd, Card: sc.Card, CardSig: sc.CardSig, Chain: chain,
			ExpectedRoot: "sha256:xNHcE_FTHQUI4Sg5KTTMfi9XSCfJ2WDx9eXUQdLl0PM"}, "chain"},
		"the card refused at intake": {&hdtpv1.VerifyCardSignatureRequest{Generation: hd, Card: strings.Replace(sc.Card, "VERSION:1", "VERSION:2", 1), CardSig: sc.CardSig, Chain: chain}, "card"},
		"a signature by another key": {&hdtpv1.VerifyCardSignatureRequest{Generation: hd, Card: sc.Card, CardSig: strings.Repeat("A", 86), Chain: chain}, "signature"},
	} {
		got, err := f.trust.VerifyCardSignature(ctx, c.req)
		if err != nil || got.GetValid() || got.GetCode() != "bad_request" || got.GetReason() != c.want {
			t.Errorf("%s: %+v, %v", name, got, err)
		}
	}
}

func mustCard(t *testing.T, v *hdtptest.Vectors, leaf string) string {
	t.Helper()
	c, err := card.Write(wire.HDTP1, "Alina Rao", v.Certificates[leaf].DER, card.SealRequired)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCompareFingerprintAddress: the newest-leaf vectors through
// CompareLeaves, the published fingerprints through Fingerprint, and the
// endpoint rules through CheckAddress, each with a refusal.
func TestCompareFingerprintAddress(t *testing.T) {
	f := newFixture(t, "", nil)
	ctx := t.Context()
	want := map[string]hdtpv1.LeafComparison{"same": hdtpv1.LeafComparison_LEAF_COMPARISON_SAME, "newer": hdtpv1.LeafComparison_LEAF_COMPARISON_RENEWAL,
		"superseded": hdtpv1.LeafComparison_LEAF_COMPARISON_SUPERSEDED, "conflict": hdtpv1.LeafComparison_LEAF_COMPARISON_CONFLICT}
	for _, gen := range []wire.Generation{wire.PACT2, wire.HDTP1} {
		v := vectors(t, gen)
		for _, c := range v.NewestLeafCases {
			got, err := f.trust.CompareLeaves(ctx, &hdtpv1.CompareLeavesRequest{Generation: protoGen[gen], Pinned: v.Certificates[c.Pinned].DER,
				Presented: v.Certificates[c.Presented].DER})
			if err != nil || got.GetComparison() != want[c.Expect] {
				t.Errorf("%s %s/%s: %+v, %v", gen, c.Pinned, c.Presented, got, err)
			}
		}
		if got, _ := f.trust.CompareLeaves(ctx, &hdtpv1.CompareLeavesRequest{Generation: protoGen[gen], Pinned: v.Certificates["leaf_a"].DER,
			Presented: v.Certificates["leaf_b"].DER}); got.GetReason() != "different_roots" {
			t.Errorf("different roots: %+v", got)
		}
		if got, _ := f.trust.CompareLeaves(ctx, &hdtpv1.CompareLeavesRequest{Generation: protoGen[gen], Pinned: v.Certificates["leaf_a"].DER,
			Presented: v.Certificates["leaf_a_aki3"].DER}); got.GetReason() != "presented" || got.GetCertificateReason() != "authority_key_id" {
			t.Errorf("a presented leaf outside the profile: %+v", got)
		}
		for _, name := range []string{"root_a", "leaf_a"} {
			got, err := f.trust.Fingerprint(ctx, &hdtpv1.FingerprintRequest{Generation: protoGen[gen], Input: &hdtpv1.FingerprintRequest_Certificate{Certificate: v.Certificates[name].DER}})
			if err != nil || !got.GetValid() || !strings.HasPrefix(got.GetFingerprint(), "sha256:") || len(got.GetKeyId()) != 32 {
				t.Errorf("%s %s: %+v, %v", gen, name, got, err)
			}
		}
	}
	h := vectors(t, wire.HDTP1)
	for name, fp := range map[string]string{"root_a": "sha256:kfs9kG6xSsWaNtvWZsVnAWnGithg_HgKN4dbfWOGC1A", "root_c": "sha256:EMdGLvhqkdZSXX58DfRqKZ9bC534tz9RetITPwailck",
		"leaf_b": "sha256:zCJ2MAykJsOSW0BAAOFRDSisojCaqSSnI_A7-XQtOXE"} {
		got, _ := f.trust.Fingerprint(ctx, &hdtpv1.FingerprintRequest{Input: &hdtpv1.FingerprintRequest_Certificate{Certificate: h.Certificates[name].DER}})
		if got.GetFingerprint() != fp {
			t.Errorf("%s: %s, published %s", name, got.GetFingerprint(), fp)
		}
	}
	if got, _ := f.trust.Fingerprint(ctx, &hdtpv1.FingerprintRequest{Input: &hdtpv1.FingerprintRequest_Certificate{Certificate: h.Certificates["leaf_b_twin"].DER}}); got.GetValid() || got.GetReason() != "high_s" {
		t.Errorf("twin: %+v", got)
	}
	for addr, want := range map[string]string{"https://agent.alina.example/mcp": "", "https://agent.alina.example/mcp/": "trailing_slash",
		"https://127.0.0.1/mcp": "not_public", "https://[64:ff9b::7f00:1]/mcp": "not_public", "https://localhost/mcp": "local_name", "http://a.example/mcp": "scheme"} {
		got, err := f.trust.CheckAddress(ctx, &hdtpv1.CheckAddressRequest{Endpoint: addr})
		if err != nil || got.GetValid() != (want == "") || got.GetReason() != want || (want != "" && got.GetCode() != "bad_request") {
			t.Errorf("%s: %+v, %v", addr, got, err)
		}
	}
	if got, _ := f.trust.CheckAddress(ctx, &hdtpv1.CheckAddressRequest{Endpoint: "https://agent.alina.example/mcp", ResolvedAddresses: []string{"10.0.0.1"}}); got.GetReason() != "not_public" {
		t.Errorf("a name resolving inside: %+v", got)
	}
	if _, err := f.trust.CheckAddress(ctx, &hdtpv1.CheckAddressRequest{Endpoint: "https://a.example/mcp", ResolvedAddresses: []string{"nope"}}); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("a resolved address that is not one: %v", err)
	}
}
