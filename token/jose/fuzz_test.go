package jose_test

import (
	"crypto/elliptic"
	"encoding/json"
	"errors"
	"testing"

	"pactd.dev/pactd/token/jose"
)

// FuzzParseJWKS asserts properties of ParseJWKS on arbitrary input: it never
// panics, it is deterministic, every refusal is classed ErrBadDocument, and
// every accepted set holds only public P-256 / RSA >= 2048 verification keys
// with unique kids that survive a marshal/parse round trip.
func FuzzParseJWKS(f *testing.F) {
	const ecX, ecY = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"
	const rsaN = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
	ec := `{"kty":"EC","crv":"P-256","x":"` + ecX + `","y":"` + ecY + `"`
	rs := `{"kty":"RSA","n":"` + rsaN + `","e":"AQAB"`
	for _, seed := range []string{
		`{"keys":[` + ec + `,"kid":"e1","use":"sig","alg":"ES256"}]}`,
		`{"keys":[` + rs + `,"kid":"r1"}]}`,
		`{"keys":[` + ec + `},` + rs + `}]}`,
		`{"keys":[]}`,
		`{"keys":[` + ec + `,"d":"jpsQnnGQmL-YBIffH1136cLyBm84M-zRaorNIxXCPiw"}]}`,
		`{"keys":[{"kty":"oct","k":"AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow"}]}`,
		`{"keys":[` + ec + `,"kid":"a"},` + ec + `,"kid":"a"}]}`,
		`{"keys":[` + ec + `,"use":"enc"}]}`,
		`{"keys":[` + ec + `,"key_ops":["sign"]}]}`,
		`{"keys":[{"kty":"EC","crv":"P-384","x":"` + ecX + `","y":"` + ecY + `"}]}`,
		`{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}`,
		`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`,
		`{"keys":[` + ec + `,"kty":"oct"}]}`,
		`{"keys":[{"kty":"EC","crv":"P-256","x":"` + ecX + `=","y":"` + ecY + `"}]}`,
		`{"keys":{}}`,
		`{"keys":[null]}`,
		`[]`,
		``,
		`{"keys":[{"kty":"EC","crv":"P-256","x":"\u0041","y":"A"}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := jose.ParseJWKS(data, 0)
		set2, err2 := jose.ParseJWKS(data, 0)
		if (err == nil) != (err2 == nil) {
			t.Fatal("nondeterministic outcome")
		}
		if err != nil {
			if !errors.Is(err, jose.ErrBadDocument) {
				t.Fatalf("refusal not classed ErrBadDocument: %v", err)
			}
			if set != nil {
				t.Fatal("refusal returned a set")
			}
			return
		}
		if set.Len() > jose.DefaultMaxKeys || set.Len() != set2.Len() {
			t.Fatalf("bad length %d", set.Len())
		}
		kids := map[string]bool{}
		for i := range set.Len() {
			k := set.At(i)
			if k.Thumbprint() != set2.At(i).Thumbprint() {
				t.Fatal("nondeterministic thumbprint")
			}
			switch k.Algorithm() {
			case jose.AlgES256:
				if k.ECDSA() == nil || k.RSA() != nil || k.ECDSA().Curve != elliptic.P256() {
					t.Fatal("ES256 key is not a P-256 public key")
				}
			case jose.AlgRS256:
				if k.RSA() == nil || k.ECDSA() != nil || k.RSA().N.BitLen() < jose.MinRSABits || k.RSA().N.BitLen() > jose.MaxRSABits {
					t.Fatal("RS256 key out of bounds")
				}
			default:
				t.Fatalf("unexpected algorithm %q", k.Algorithm())
			}
			if kid := k.KID(); kid != "" {
				if kids[kid] {
					t.Fatalf("duplicate kid %q accepted", kid)
				}
				kids[kid] = true
				if got, ok := set.Lookup(kid); !ok || got != k {
					t.Fatalf("Lookup(%q) does not return its key", kid)
				}
			}
		}
		// An accepted document carries no private or symmetric members,
		// as seen by an independent parser.
		var doc struct {
			Keys []map[string]json.RawMessage `json:"keys"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("accepted input encoding/json refuses: %v", err)
		}
		for _, m := range doc.Keys {
			for _, name := range []string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"} {
				if _, ok := m[name]; ok {
					t.Fatalf("accepted a key with private member %q", name)
				}
			}
		}
		out, err := set.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		back, err := jose.ParseJWKS(out, 0)
		if err != nil {
			t.Fatalf("round trip refused: %v", err)
		}
		for i := range set.Len() {
			if back.At(i).Thumbprint() != set.At(i).Thumbprint() || back.At(i).KID() != set.At(i).KID() {
				t.Fatal("round trip changed a key")
			}
		}
	})
}
