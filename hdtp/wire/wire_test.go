package wire_test

import (
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/x509"
	"strings"
	"testing"

	"pactd.dev/pactd/hdtp/hdtptest"
	"pactd.dev/pactd/hdtp/wire"
)

// TestVectorDerivation: each generation's passkey derivation vectors come
// out of its strings table: the PRF salt is SHA-256 of the vault label,
// each seed is HKDF-SHA256 with an empty salt and the info string, and
// the root seed's Ed25519 key has the published SPKI and fingerprint.
func TestVectorDerivation(t *testing.T) {
	for _, gen := range []wire.Generation{wire.PACT2, wire.HDTP1} {
		v, err := hdtptest.Load(gen)
		if err != nil {
			t.Fatal(err)
		}
		s := gen.Strings()
		if len(v.Derivation) != 3 {
			t.Fatalf("%s: %d derivation vectors", gen, len(v.Derivation))
		}
		infos := map[string]string{"root": s.RootInfo, "store-key": s.StoreKeyInfo, "store-id": s.StoreIDInfo}
		for _, d := range v.Derivation {
			salt := sha256.Sum256([]byte(s.VaultSaltLabel))
			if wire.B64Encode(salt[:]) != d.Salt || infos[d.Label] != d.Info {
				t.Fatalf("%s %s: salt or info is not the table's", gen, d.Label)
			}
			prf, _ := wire.B64Decode(d.PRF)
			seed, err := hkdf.Key(sha256.New, prf, nil, d.Info, 32)
			if err != nil || wire.B64Encode(seed) != d.Seed {
				t.Fatalf("%s %s: seed %s, published %s", gen, d.Label, wire.B64Encode(seed), d.Seed)
			}
			if d.Label != "root" {
				continue
			}
			spki, err := x509.MarshalPKIXPublicKey(ed25519.NewKeyFromSeed(seed).Public())
			if err != nil || wire.B64Encode(spki) != d.SPKI || wire.KeyIDOf(spki).Fingerprint() != d.Fingerprint {
				t.Fatalf("%s root: spki or fingerprint differs from the published ones", gen)
			}
		}
	}
}

// TestParseFingerprint: only the canonical spelling parses.
func TestParseFingerprint(t *testing.T) {
	good := "sha256:kfs9kG6xSsWaNtvWZsVnAWnGithg_HgKN4dbfWOGC1A"
	k, ok := wire.ParseFingerprint(good)
	if !ok || k.Fingerprint() != good {
		t.Fatal("the published root_a fingerprint does not round-trip")
	}
	for _, bad := range []string{
		"", "sha256:", good[:len(good)-1], good + "A", "SHA256:" + good[7:], "sha384:" + good[7:],
		good[:len(good)-1] + "B", // non-zero trailing bits: the last character is not one of AEIMQUYcgkosw048
		good[:len(good)-1] + "=", strings.Replace(good, "_", "/", 1), "sha256:+" + good[8:], good[:20] + " " + good[21:],
	} {
		if _, ok := wire.ParseFingerprint(bad); ok {
			t.Errorf("ParseFingerprint(%q) accepted", bad)
		}
	}
}

// TestLimitsJSON: each generation advertises its own limit members with
// the §12 defaults, in its table's order.
func TestLimitsJSON(t *testing.T) {
	l := wire.DefaultLimits()
	if got, want := l.JSON(wire.HDTP1), `{"text_bytes":16384,"note_bytes":1024,"media_inline_bytes":5242880,"availability_slots":5,"invite_ttl_days":90,`+
		`"contact_calls_per_second":1,"contact_burst":10,"identity_calls_per_second":1000,"guest_calls_per_hour":10,"guest_source_calls_per_hour":60}`; got != want {
		t.Errorf("HDTP limits\n%s\nwant\n%s", got, want)
	}
	if got, want := l.JSON(wire.PACT2), `{"text_bytes":16384,"note_bytes":1024,"media_inline_bytes":5242880,"availability_slots":5,"invite_ttl_days":90,`+
		`"contact_calls_per_hour":60,"guest_calls_per_hour":10}`; got != want {
		t.Errorf("PACT limits\n%s\nwant\n%s", got, want)
	}
}

// TestStrings: the two tables hold the digest's §0.2 strings, and no
// string of one generation is in the other's.
func TestStrings(t *testing.T) {
	p, h := wire.PACT2.Strings(), wire.HDTP1.Strings()
	if p.CertProp != "X-PACT-CERT" || h.CertProp != "X-HDTP-CERT" || p.EnvelopeVersion != 2 || h.EnvelopeVersion != 1 ||
		p.HPKEInfo != "PACT-SEAL-v2" || h.HPKEInfo != "HDTP-SEAL-v1" || p.SuiteX25519 != "PACT-SEAL-X25519" || h.SuiteP256 != "HDTP-SEAL-P256" ||
		p.CallType != "application/pact-call+json" || h.ResultType != "application/hdtp-result+json" ||
		p.RootEndDate || !h.RootEndDate || p.TolerantCards || !h.TolerantCards {
		t.Fatal("a string differs from the digest's table")
	}
	if wire.Generation(0).Strings() != nil || wire.Generation(3).Valid() {
		t.Fatal("an invalid generation has strings")
	}
}
