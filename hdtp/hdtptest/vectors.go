// Package hdtptest loads the published test vectors of both wire
// generations (testdata/README.md names their sources) for the tests of
// the HDTP packages and the service. It is imported by tests only.
package hdtptest

import (
	"crypto"
	"crypto/x509"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"pactd.dev/pactd/hdtp/wire"
)

//go:embed testdata/hdtp-1.0-vectors.json
var hdtpVectors []byte

//go:embed testdata/pact-2.2.1-vectors.json
var pactVectors []byte

//go:embed testdata/signing-request-renew.json
var signingRequest []byte

// Vectors are one generation's published vectors, decoded.
type Vectors struct {
	// Generation is whose vectors these are.
	Generation wire.Generation
	// Now is the vectors' clock: 2026-09-13T12:00:00Z.
	Now time.Time
	// Certificates are the DER of every named certificate.
	Certificates map[string]Certificate
	// LeafKeys are the leaf private keys, from their PKCS #8.
	LeafKeys map[string]crypto.Signer
	// ChainCases, NewestLeafCases and RenewedCases are the three case lists.
	ChainCases      []ChainCase
	NewestLeafCases []NewestLeafCase
	RenewedCases    []RenewedCase
	// Envelopes are the sealed envelopes.
	Envelopes []Envelope
	// Derivation are the passkey derivation vectors.
	Derivation []Derivation
	// SignedCard is HDTP's signed card; nil for PACT.
	SignedCard *SignedCard
}

// Certificate is one named certificate.
type Certificate struct {
	DER []byte
	// Refused marks the certificates the profile refuses.
	Refused bool
	Note    string
}

// ChainCase is one chain validation case.
type ChainCase struct {
	Name             string   `json:"name"`
	Chain            []string `json:"chain"`
	ExpectedRoot     string   `json:"expected_root"`
	ExpectedEndpoint string   `json:"expected_endpoint"`
	Now              string   `json:"now"`
	Expect           string   `json:"expect"`
	Rule             int      `json:"rule"`
	Reason           string   `json:"reason"`
}

// NewestLeafCase is one comparison.
type NewestLeafCase struct {
	Pinned    string `json:"pinned"`
	Presented string `json:"presented"`
	Expect    string `json:"expect"`
}

// RenewedCase is one certificate_renewed answer.
type RenewedCase struct {
	Name       string `json:"name"`
	PinnedLeaf string `json:"pinned_leaf"`
	Dialed     string `json:"dialed"`
	Now        string `json:"now"`
	Answer     struct {
		Code string `json:"code"`
		Data struct {
			Chain []string `json:"chain"`
		} `json:"data"`
	} `json:"answer"`
	Expect string `json:"expect"`
}

// Envelope is one sealed envelope.
type Envelope struct {
	Name           string   `json:"name"`
	Form           string   `json:"form"`
	Suite          string   `json:"suite"`
	SenderChain    []string `json:"sender_chain"`
	RecipientChain []string `json:"recipient_chain"`
	PlaintextHex   string   `json:"plaintext_hex"`
	Protected      string   `json:"protected"`
	Enc            string   `json:"enc"`
	Ct             string   `json:"ct"`
	Sig            string   `json:"sig"`
}

// Derivation is one passkey derivation vector.
type Derivation struct {
	Label       string `json:"label"`
	PRF         string `json:"prf"`
	Salt        string `json:"salt"`
	Info        string `json:"info"`
	Seed        string `json:"seed"`
	Alg         string `json:"alg"`
	SPKI        string `json:"spki"`
	Fingerprint string `json:"fingerprint"`
}

// SignedCard is a card with its card_sig.
type SignedCard struct {
	Leaf    string `json:"leaf"`
	Card    string `json:"card"`
	CardSig string `json:"card_sig"`
}

// Load decodes the vectors of a generation.
func Load(gen wire.Generation) (*Vectors, error) {
	raw := pactVectors
	if gen == wire.HDTP1 {
		raw = hdtpVectors
	}
	var f struct {
		Now          string `json:"now"`
		Certificates map[string]struct {
			DERHex  string `json:"der_hex"`
			Note    string `json:"note"`
			Refused bool   `json:"refused"`
		} `json:"certificates"`
		LeafKeys        map[string]string `json:"leaf_keys_pkcs8_hex"`
		ChainCases      []ChainCase       `json:"chain_cases"`
		NewestLeafCases []NewestLeafCase  `json:"newest_leaf_cases"`
		RenewedCases    []RenewedCase     `json:"certificate_renewed_cases"`
		Envelopes       []Envelope        `json:"envelopes"`
		Derivation      []Derivation      `json:"derivation"`
		SignedCard      *SignedCard       `json:"signed_card"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, err
	}
	now, err := time.Parse(time.RFC3339, f.Now)
	if err != nil {
		return nil, err
	}
	v := &Vectors{Generation: gen, Now: now, Certificates: map[string]Certificate{}, LeafKeys: map[string]crypto.Signer{},
		ChainCases: f.ChainCases, NewestLeafCases: f.NewestLeafCases, RenewedCases: f.RenewedCases,
		Envelopes: f.Envelopes, Derivation: f.Derivation, SignedCard: f.SignedCard}
	for name, c := range f.Certificates {
		der, err := hex.DecodeString(c.DERHex)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		v.Certificates[name] = Certificate{DER: der, Refused: c.Refused, Note: c.Note}
	}
	for name, h := range f.LeafKeys {
		der, err := hex.DecodeString(h)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		k, err := x509.ParsePKCS8PrivateKey(der)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		s, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("%s: %T is not a signer", name, k)
		}
		v.LeafKeys[name] = s
	}
	return v, nil
}

// Chain returns the DER of the named certificates.
func (v *Vectors) Chain(names ...string) [][]byte {
	out := make([][]byte, len(names))
	for i, n := range names {
		out[i] = v.Certificates[n].DER
	}
	return out
}

// SigningRequest is HDTP's published example signing request
// (schema/1.0/examples/SigningRequest/renew.json): the fields a host posts
// to a web wallet, with csr the base64url PKCS #10 for leaf_a_next's key.
type SigningRequest struct {
	CSR        string `json:"csr"`
	Purpose    string `json:"purpose"`
	ExpectRoot string `json:"expect_root"`
	Redirect   string `json:"redirect"`
	State      string `json:"state"`
	Recipient  string `json:"recipient"`
	ValidDays  string `json:"valid_days"`
	Expires    string `json:"expires"`
}

// LoadSigningRequest decodes the example signing request.
func LoadSigningRequest() (*SigningRequest, error) {
	var r SigningRequest
	if err := json.Unmarshal(signingRequest, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
