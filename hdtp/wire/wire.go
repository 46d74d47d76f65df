// Package wire holds what the two wire generations of the second protocol
// pactd backs share and what tells them apart: PACT 2.2.x ("Personal Agent
// Communication & Trust") and HDTP 1.0 (the same protocol renamed "Human
// Delegated Trust Protocol", with every wire string changed). An identity
// speaks one generation; its Strings are the card properties, envelope
// version, suite names, HPKE info, media types and limit members it writes
// and the only ones it accepts. Identities of different generations cannot
// talk to each other.
//
// The package also holds the error codes a refusal carries (the same fifteen
// in both generations), fingerprints and key ids, and the strict base64url
// codec every member of the protocol is written in.
package wire

// Generation is a wire generation.
type Generation uint8

// The generations. The zero value is no generation.
const (
	// PACT2 is PACT 2.2.x: X-PACT-* card properties, envelope v 2,
	// PACT-SEAL-* suites, HPKE info PACT-SEAL-v2.
	PACT2 Generation = 1
	// HDTP1 is HDTP 1.0 with its amendments: X-HDTP-* card properties,
	// envelope v 1, HDTP-SEAL-* suites, HPKE info HDTP-SEAL-v1, roots that
	// may carry an end date, and the tolerant card reading of SEP-0001.
	HDTP1 Generation = 2
)

// Valid reports whether g is one of the two generations.
func (g Generation) Valid() bool { return g == PACT2 || g == HDTP1 }

// String names the generation: "PACT2", "HDTP1" or "invalid".
func (g Generation) String() string {
	switch g {
	case PACT2:
		return "PACT2"
	case HDTP1:
		return "HDTP1"
	}
	return "invalid"
}

// Strings are the wire strings and rules of one generation.
type Strings struct {
	// Name is the protocol and version, for messages: "PACT 2.2" or "HDTP 1.0".
	Name string
	// PropPrefix starts every protocol card property: "X-PACT-" or "X-HDTP-".
	PropPrefix string
	// VersionProp, CertProp and SealProp are the card properties.
	VersionProp, CertProp, SealProp string
	// CardVersion is the only X-*-VERSION value accepted: "2" or "1".
	CardVersion string
	// EnvelopeVersion is the envelope header's v: 2 or 1.
	EnvelopeVersion int64
	// SuiteP256 and SuiteX25519 name the two suites.
	SuiteP256, SuiteX25519 string
	// HPKEInfo is the HPKE info string of every envelope.
	HPKEInfo string
	// CallType and ResultType are the envelope cty of a request and of a
	// result.
	CallType, ResultType string
	// InviteMediaType is the media type of the invite landing's JSON view.
	InviteMediaType string
	// DeepLinkScheme is the optional deep-link scheme: "pact" or "hdtp".
	DeepLinkScheme string
	// VaultSaltLabel is hashed (SHA-256) into the passkey PRF salt; the
	// RootInfo, StoreKeyInfo and StoreIDInfo strings are the HKDF info of
	// a wallet's three derivations. pactd holds no root; these are here so
	// the published derivation vectors run against the same table.
	VaultSaltLabel, RootInfo, StoreKeyInfo, StoreIDInfo string
	// RootProofPrefix starts a wallet's root-proof challenge.
	RootProofPrefix string
	// ExportMember is the export manifest's format member.
	ExportMember string
	// RootEndDate reports whether a root may carry an end date other than
	// 99991231235959Z (HDTP, amended 10-04); PACT refuses one by the
	// certificate profile.
	RootEndDate bool
	// TolerantCards reports whether a card whose folding was damaged in
	// transit is read by SEP-0001's rules (HDTP, amended 10-05); PACT reads
	// cards by plain RFC 6350.
	TolerantCards bool
}

var pact2 = Strings{
	Name:        "PACT 2.2",
	PropPrefix:  "X-PACT-",
	VersionProp: "X-PACT-VERSION", CertProp: "X-PACT-CERT", SealProp: "X-PACT-SEAL",
	CardVersion:     "2",
	EnvelopeVersion: 2,
	SuiteP256:       "PACT-SEAL-P256", SuiteX25519: "PACT-SEAL-X25519",
	HPKEInfo: "PACT-SEAL-v2",
	CallType: "application/pact-call+json", ResultType: "application/pact-result+json",
	InviteMediaType: "application/pact-invite+json",
	DeepLinkScheme:  "pact",
	VaultSaltLabel:  "pact/vault/1", RootInfo: "pact/root/1", StoreKeyInfo: "pact/store-key/1", StoreIDInfo: "pact/store-id/1",
	RootProofPrefix: "PACT root proof v1\n",
	ExportMember:    "pact_export",
}

var hdtp1 = Strings{
	Name:        "HDTP 1.0",
	PropPrefix:  "X-HDTP-",
	VersionProp: "X-HDTP-VERSION", CertProp: "X-HDTP-CERT", SealProp: "X-HDTP-SEAL",
	CardVersion:     "1",
	EnvelopeVersion: 1,
	SuiteP256:       "HDTP-SEAL-P256", SuiteX25519: "HDTP-SEAL-X25519",
	HPKEInfo: "HDTP-SEAL-v1",
	CallType: "application/hdtp-call+json", ResultType: "application/hdtp-result+json",
	InviteMediaType: "application/hdtp-invite+json",
	DeepLinkScheme:  "hdtp",
	VaultSaltLabel:  "hdtp/vault/1", RootInfo: "hdtp/root/1", StoreKeyInfo: "hdtp/store-key/1", StoreIDInfo: "hdtp/store-id/1",
	RootProofPrefix: "HDTP root proof v1\n",
	ExportMember:    "hdtp_export",
	RootEndDate:     true,
	TolerantCards:   true,
}

// Strings returns the generation's table; nil for an invalid generation.
// The table is shared: never modify it.
func (g Generation) Strings() *Strings {
	switch g {
	case PACT2:
		return &pact2
	case HDTP1:
		return &hdtp1
	}
	return nil
}

// Other returns the other generation (PACT2 for HDTP1 and back), so a
// reader can name what it was given when a card or envelope is of the
// wrong one.
func (g Generation) Other() Generation {
	if g == PACT2 {
		return HDTP1
	}
	return PACT2
}
