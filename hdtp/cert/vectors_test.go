package cert_test

import (
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/hdtp/cert"
	"pactd.dev/pactd/hdtp/hdtptest"
	"pactd.dev/pactd/hdtp/wire"
)

func load(t *testing.T, gen wire.Generation) *hdtptest.Vectors {
	t.Helper()
	v, err := hdtptest.Load(gen)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func kindOf(name string) cert.Kind {
	if strings.HasPrefix(name, "root") {
		return cert.KindRoot
	}
	return cert.KindLeaf
}

// refusedReasons are the profile reasons the vectors' refused certificates
// are refused for, from each one's note: the high-S twin (§14.1 low-S), 30
// February, a 3-byte authorityKeyIdentifier, a root that ends before it
// starts.
var refusedReasons = map[string]cert.Reason{
	"leaf_b_twin":      cert.ReasonHighS,
	"leaf_a_feb30":     cert.ReasonValidityDate,
	"leaf_a_aki3":      cert.ReasonAuthorityKeyID,
	"root_c_backwards": cert.ReasonValidityOrder,
}

// publishedFingerprints are the fingerprints and key ids the digest lists
// from the vectors (hdtp.md §7.3), per generation.
var publishedFingerprints = map[wire.Generation]map[string]string{
	wire.HDTP1: {
		"root_a": "sha256:kfs9kG6xSsWaNtvWZsVnAWnGithg_HgKN4dbfWOGC1A",
		"root_b": "sha256:xNHcE_FTHQUI4Sg5KTTMfi9XSCfJ2WDx9eXUQdLl0PM",
		"root_c": "sha256:EMdGLvhqkdZSXX58DfRqKZ9bC534tz9RetITPwailck",
		"leaf_a": "sha256:CXXq0MYBl0VU15H1r0xegHXiJw2lZJlsYJFoyt0gFmM",
		"leaf_b": "sha256:zCJ2MAykJsOSW0BAAOFRDSisojCaqSSnI_A7-XQtOXE",
	},
	wire.PACT2: {
		"root_a": "sha256:Yzz9D7a-YqDpfFGbr6Sr82Ol-LTzfz2ya__DIKutm-w",
		"root_b": "sha256:9T46UOTEFlPC2zGJZ5qGcznbg215xbC6bxcE0T5QorM",
		"leaf_a": "sha256:NXn8IrjEPdD_sBJ4oOYrTVUH5IfBCDDZzUolr5ifAlI",
		"leaf_b": "sha256:ruy1Wys1kI9FPsEVvaH0aakNC0UzbKU0USEslTE9sl8",
	},
}

// TestVectorCertificates: every valid certificate passes the profile as
// what its name says it is, every refused one is refused at rule 1 for the
// reason its note gives, and the fingerprints are the published ones.
func TestVectorCertificates(t *testing.T) {
	for _, gen := range generations {
		v := load(t, gen)
		wantCerts := map[wire.Generation]int{wire.PACT2: 10, wire.HDTP1: 15}[gen]
		if len(v.Certificates) != wantCerts {
			t.Fatalf("%s: %d certificates, the digest counts %d", gen, len(v.Certificates), wantCerts)
		}
		for name, c := range v.Certificates {
			got, err := cert.Parse(c.DER, kindOf(name), gen)
			if c.Refused {
				if err == nil || cert.RuleOf(err) != 1 || cert.ReasonOf(err) != refusedReasons[name] {
					t.Errorf("%s %s: err = %v, want rule 1 %s", gen, name, err, refusedReasons[name])
				}
				continue
			}
			if err != nil {
				t.Errorf("%s %s: %v", gen, name, err)
				continue
			}
			if want, ok := publishedFingerprints[gen][name]; ok && got.Fingerprint() != want {
				t.Errorf("%s %s: fingerprint %s, published %s", gen, name, got.Fingerprint(), want)
			}
			// A leaf's authorityKeyIdentifier is its root's key id.
			if got.Kind == cert.KindLeaf {
				rootName := "root_" + strings.Split(name, "_")[1]
				root, err := cert.Parse(v.Certificates[rootName].DER, cert.KindRoot, gen)
				if err != nil || got.AuthorityKeyID != root.KeyID {
					t.Errorf("%s %s: AKI is not %s's key id", gen, name, rootName)
				}
			}
		}
	}
}

// TestVectorChainCases: every chain case comes out as the vectors expect,
// refusals at the rule they name and, where they give one, for the reason
// they give.
func TestVectorChainCases(t *testing.T) {
	reasons := map[string]cert.Reason{
		"root has expired":                      cert.ReasonRootExpired,
		"leaf outlives the root":                cert.ReasonLeafOutlivesRoot,
		"root notAfter is before its notBefore": cert.ReasonValidityOrder,
	}
	for _, gen := range generations {
		v := load(t, gen)
		wantCases := map[wire.Generation]int{wire.PACT2: 15, wire.HDTP1: 20}[gen]
		if len(v.ChainCases) != wantCases {
			t.Fatalf("%s: %d chain cases, the digest counts %d", gen, len(v.ChainCases), wantCases)
		}
		for _, tc := range v.ChainCases {
			t.Run(gen.String()+"/"+tc.Name, func(t *testing.T) {
				now, err := time.Parse(time.RFC3339, tc.Now)
				if err != nil {
					t.Fatal(err)
				}
				o := cert.ChainOptions{Generation: gen, Now: now, ExpectedEndpoint: tc.ExpectedEndpoint}
				if tc.ExpectedRoot != "" {
					k, ok := wire.ParseFingerprint(tc.ExpectedRoot)
					if !ok {
						t.Fatalf("expected_root %q does not parse", tc.ExpectedRoot)
					}
					o.ExpectedRoot = &k
				}
				c, err := cert.VerifyChain(v.Chain(tc.Chain...), o)
				switch tc.Expect {
				case "accept":
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					if c.Leaf.Endpoint == "" || c.Root.KeyID != c.Leaf.AuthorityKeyID {
						t.Fatalf("accepted chain = %+v", c)
					}
				case "refuse":
					if err == nil {
						t.Fatal("accepted")
					}
					if cert.RuleOf(err) != tc.Rule {
						t.Fatalf("refused at rule %d (%v), the vectors say rule %d", cert.RuleOf(err), err, tc.Rule)
					}
					if tc.Reason != "" && cert.ReasonOf(err) != reasons[tc.Reason] {
						t.Fatalf("reason %s, the vectors say %q", cert.ReasonOf(err), tc.Reason)
					}
				default:
					t.Fatalf("unknown expectation %q", tc.Expect)
				}
			})
		}
	}
}

// TestVectorNewestLeaf: the four §14.3 comparisons.
func TestVectorNewestLeaf(t *testing.T) {
	want := map[string]cert.Comparison{"same": cert.Same, "newer": cert.Renewal, "superseded": cert.Superseded, "conflict": cert.Conflict}
	for _, gen := range generations {
		v := load(t, gen)
		if len(v.NewestLeafCases) != 4 {
			t.Fatalf("%s: %d newest-leaf cases, want 4", gen, len(v.NewestLeafCases))
		}
		for _, tc := range v.NewestLeafCases {
			pinned, err1 := cert.Parse(v.Certificates[tc.Pinned].DER, cert.KindLeaf, gen)
			presented, err2 := cert.Parse(v.Certificates[tc.Presented].DER, cert.KindLeaf, gen)
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: %v %v", gen, err1, err2)
			}
			if got := cert.Compare(pinned, presented); got != want[tc.Expect] {
				t.Errorf("%s %s vs %s: %s, want %s", gen, tc.Pinned, tc.Presented, got, tc.Expect)
			}
		}
	}
}

// TestVectorCertificateRenewed: a caller follows the renewal and discards
// the older chain and the other root's.
func TestVectorCertificateRenewed(t *testing.T) {
	for _, gen := range generations {
		v := load(t, gen)
		if len(v.RenewedCases) != 3 {
			t.Fatalf("%s: %d certificate_renewed cases, want 3", gen, len(v.RenewedCases))
		}
		for _, tc := range v.RenewedCases {
			now, err := time.Parse(time.RFC3339, tc.Now)
			if err != nil {
				t.Fatal(err)
			}
			if tc.Answer.Code != string(wire.CodeCertificateRenewed) {
				t.Fatalf("%s %s: code %q", gen, tc.Name, tc.Answer.Code)
			}
			pinned, err := cert.Parse(v.Certificates[tc.PinnedLeaf].DER, cert.KindLeaf, gen)
			if err != nil {
				t.Fatal(err)
			}
			var chain [][]byte
			for _, s := range tc.Answer.Data.Chain {
				der, ok := wire.B64Decode(s)
				if !ok {
					t.Fatalf("%s %s: chain member is not canonical base64url", gen, tc.Name)
				}
				chain = append(chain, der)
			}
			_, err = cert.FollowRenewed(pinned, tc.Dialed, chain, gen, now)
			if got := map[bool]string{true: "follow", false: "discard"}[err == nil]; got != tc.Expect {
				t.Errorf("%s %s: %s (%v), want %s", gen, tc.Name, got, err, tc.Expect)
			}
		}
	}
}

// TestX509AloneIsNotEnough records why the profile has its own parser:
// crypto/x509 accepts the high-S twin and the 3-byte AKI that §14.1
// refuses, and a root that ends before it starts. (If this test starts
// failing, crypto/x509 became stricter; the profile parser stays.)
func TestX509AloneIsNotEnough(t *testing.T) {
	v := load(t, wire.HDTP1)
	for _, name := range []string{"leaf_b_twin", "leaf_a_aki3", "root_c_backwards"} {
		if _, err := x509.ParseCertificate(v.Certificates[name].DER); err != nil {
			t.Errorf("crypto/x509 refuses %s now: %v", name, err)
		}
		if _, err := cert.Parse(v.Certificates[name].DER, kindOf(name), wire.HDTP1); err == nil {
			t.Errorf("the profile accepts %s", name)
		}
	}
}

var (
	generations = []wire.Generation{wire.PACT2, wire.HDTP1}
	testNow     = time.Date(2026, 9, 13, 12, 0, 0, 0, time.UTC)
)
