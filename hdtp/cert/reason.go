package cert

import (
	"errors"
	"strconv"
)

// Reason names why a certificate, chain or signing request was refused.
// Reasons are stable identifiers: tests assert them, logs and metrics carry
// them and the RPC answers name them. The protocol's error code for a
// refusal depends on where the chain came from (envelope_invalid in an
// envelope, bad_request in a card, a refused handshake over TLS); the
// reason says which rule failed, whatever the context.
type Reason string

// Rule 1: not a certificate of the profile (§14.1), or not a chain of
// exactly [leaf, root].
const (
	ReasonTooLarge           Reason = "too_large"             // over 4096 bytes
	ReasonDER                Reason = "der"                   // not strict DER: a wrong tag, a non-minimal or indefinite length, a truncated element
	ReasonTrailingData       Reason = "trailing_data"         // bytes after the certificate (or inside a structure after its last field)
	ReasonVersion            Reason = "version"               // not exactly v3 (a0 03 02 01 02)
	ReasonSerial             Reason = "serial"                // not a positive, minimally encoded INTEGER of at most 20 bytes
	ReasonSignatureAlgorithm Reason = "signature_algorithm"   // neither Ed25519 nor ECDSA-with-SHA256 byte for byte (NULL parameters included)
	ReasonAlgorithmMismatch  Reason = "algorithm_mismatch"    // the outer signature algorithm is not byte-equal to the inner one
	ReasonIssuerKeyAlgorithm Reason = "issuer_key_algorithm"  // a root signed with an algorithm that is not its own key's
	ReasonName               Reason = "name"                  // issuer or subject is not exactly one commonName
	ReasonValidityDate       Reason = "validity_date"         // a date that does not exist, or not UTCTime before 2050 / GeneralizedTime from 2050 with seconds and Z
	ReasonValidityOrder      Reason = "validity_order"        // notAfter before notBefore
	ReasonRootEndDate        Reason = "root_end_date"         // PACT: a root whose notAfter is not 99991231235959Z
	ReasonUniqueID           Reason = "unique_id"             // an issuer or subject unique identifier
	ReasonKeyAlgorithm       Reason = "key_algorithm"         // a key that is neither Ed25519 nor P-256
	ReasonCompressedPoint    Reason = "compressed_point"      // a P-256 key written as a compressed point
	ReasonKeyEncoding        Reason = "key_encoding"          // a key that is not a valid, canonically encoded point
	ReasonWeakKey            Reason = "weak_key"              // an Ed25519 key of small order
	ReasonExtensions         Reason = "extensions"            // no extensions
	ReasonUnknownExtension   Reason = "unknown_extension"     // an extension the profile does not list for this kind of certificate
	ReasonDuplicateExtension Reason = "duplicate_extension"   // an extension given twice
	ReasonExtensionCritical  Reason = "extension_criticality" // basicConstraints or keyUsage not critical, or another extension critical
	ReasonExtensionEncoding  Reason = "extension_encoding"    // a value of the wrong ASN.1 type or not filling its OCTET STRING; critical FALSE written out
	ReasonBasicConstraints   Reason = "basic_constraints"     // not cA TRUE with pathLen 0 (root), or not the empty SEQUENCE (leaf)
	ReasonKeyUsage           Reason = "key_usage"             // not exactly keyCertSign (root), digitalSignature (Ed25519 leaf), digitalSignature+keyAgreement (P-256 leaf)
	ReasonExtendedKeyUsage   Reason = "extended_key_usage"    // not exactly serverAuth and clientAuth
	ReasonSubjectAltName     Reason = "subject_alt_name"      // not exactly one URI and at most one dNSName
	ReasonEndpoint           Reason = "endpoint"              // the URI is not an endpoint in normal form
	ReasonDNSName            Reason = "dns_name"              // a dNSName that is not the URI's host
	ReasonSubjectKeyID       Reason = "subject_key_id"        // not the 32-byte key id of the certificate's own key
	ReasonAuthorityKeyID     Reason = "authority_key_id"      // not exactly keyIdentifier of 32 bytes
	ReasonSignatureEncoding  Reason = "signature_encoding"    // a signature that is not 64 bytes (Ed25519) or strict DER with 0 < r, s < n (ECDSA)
	ReasonHighS              Reason = "high_s"                // an ECDSA certificate signature with s > n/2
	ReasonChainLength        Reason = "chain_length"          // not exactly two certificates
	ReasonNotALeaf           Reason = "not_a_leaf"            // the first certificate is a root
	ReasonNotARoot           Reason = "not_a_root"            // the second certificate is a leaf
	ReasonCSR                Reason = "csr"                   // a signing request that is not of the profile
	ReasonCSRSignature       Reason = "csr_signature"         // a signing request whose signature does not verify
)

// Rule 2: the root.
const (
	ReasonRootSignature Reason = "root_signature" // the root's self-signature does not verify
	ReasonRootMismatch  Reason = "root_mismatch"  // the root is not the one expected (a pin, a card's AKI)
)

// Rule 3: the leaf under the root.
const (
	ReasonLeafSignature Reason = "leaf_signature" // the leaf's signature does not verify under the root's key
	ReasonAKIMismatch   Reason = "aki_mismatch"   // the leaf's authorityKeyIdentifier is not the root's key id
)

// Rule 4: dates (read now against the leaf, and the root's end date in
// HDTP; never the root's notBefore).
const (
	ReasonRootExpired      Reason = "root_expired"       // HDTP: now is after the root's notAfter
	ReasonLeafOutlivesRoot Reason = "leaf_outlives_root" // HDTP: the leaf's notAfter is after the root's
	ReasonLeafNotYetValid  Reason = "leaf_not_yet_valid" // now is before the leaf's notBefore
	ReasonLeafExpired      Reason = "leaf_expired"       // now is after the leaf's notAfter
	ReasonLeafSpan         Reason = "leaf_span"          // the leaf is valid for more than 398 days
)

// Rule 5: the endpoint.
const (
	ReasonEndpointMismatch Reason = "endpoint_mismatch" // the leaf's endpoint is not byte-equal to the one expected
)

// The newest-leaf rule (§14.3), for a certificate_renewed chain.
const (
	ReasonNotNewer Reason = "not_newer" // the chain's leaf is older than the pinned one, or conflicts with it
)

// Error is a refusal: the §14.2 rule that failed, its named reason, and
// which certificate of the chain it concerns.
type Error struct {
	// Rule is the §14.2 rule, 1 to 5; 0 for the newest-leaf rule of §14.3.
	Rule int
	// Reason names the failure.
	Reason Reason
	// Cert is the certificate's position in the chain (0 the leaf, 1 the
	// root), or -1 for the chain as a whole.
	Cert int
	// Detail says more, for logs; it never holds key material.
	Detail string
}

func (e *Error) Error() string {
	s := "rule " + strconv.Itoa(e.Rule) + ": " + string(e.Reason)
	if e.Rule == 0 {
		s = "newest leaf: " + string(e.Reason)
	}
	if e.Cert >= 0 {
		s += " (certificate " + strconv.Itoa(e.Cert) + ")"
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// ReasonOf returns the reason of an *Error, or "".
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// RuleOf returns the rule of an *Error, or 0.
func RuleOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Rule
	}
	return 0
}

func refuse(r Reason, detail string) *Error {
	return &Error{Rule: 1, Reason: r, Cert: -1, Detail: detail}
}
