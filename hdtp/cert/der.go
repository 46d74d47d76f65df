package cert

// The byte patterns of the profile (HDTP/PACT §14.1), as DER.
var (
	// algEd25519 is the AlgorithmIdentifier of Ed25519 (RFC 8410): no
	// parameters.
	algEd25519 = []byte{0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70}
	// algECDSASHA256 is ecdsa-with-SHA256 (RFC 5758): no parameters, not
	// even NULL.
	algECDSASHA256 = []byte{0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02}
	// spkiAlgP256 is id-ecPublicKey with the namedCurve prime256v1.
	spkiAlgP256 = []byte{0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07}
	// version3 is the explicit [0] version v3.
	version3 = []byte{0xa0, 0x03, 0x02, 0x01, 0x02}

	oidCommonName       = []byte{0x55, 0x04, 0x03}
	oidBasicConstraints = []byte{0x55, 0x1d, 0x13}
	oidKeyUsage         = []byte{0x55, 0x1d, 0x0f}
	oidExtKeyUsage      = []byte{0x55, 0x1d, 0x25}
	oidSubjectAltName   = []byte{0x55, 0x1d, 0x11}
	oidSubjectKeyID     = []byte{0x55, 0x1d, 0x0e}
	oidAuthorityKeyID   = []byte{0x55, 0x1d, 0x23}
	oidServerAuth       = []byte{0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x01}
	oidClientAuth       = []byte{0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x02}
	oidExtensionRequest = []byte{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x0e}

	// bcRoot is basicConstraints cA TRUE, pathLenConstraint 0.
	bcRoot = []byte{0x30, 0x06, 0x01, 0x01, 0xff, 0x02, 0x01, 0x00}
	// bcLeaf is basicConstraints with cA FALSE: the empty SEQUENCE (DER
	// omits a default).
	bcLeaf = []byte{0x30, 0x00}
	// kuRoot is keyUsage keyCertSign.
	kuRoot = []byte{0x03, 0x02, 0x02, 0x04}
	// kuLeafEd25519 is keyUsage digitalSignature.
	kuLeafEd25519 = []byte{0x03, 0x02, 0x07, 0x80}
	// kuLeafP256 is keyUsage digitalSignature and keyAgreement (a P-256
	// leaf's key is also the key others seal to by ECDH).
	kuLeafP256 = []byte{0x03, 0x02, 0x03, 0x88}
)

// KeyAlg is the algorithm of a key, and of the signatures it makes.
type KeyAlg uint8

// The key algorithms of the profile.
const (
	// Ed25519 keys sign with pure Ed25519 (RFC 8032).
	Ed25519 KeyAlg = 1
	// P256 keys sign with ECDSA over P-256 and SHA-256, DER-encoded.
	P256 KeyAlg = 2
)

// String names the algorithm: "ed25519" or "p256".
func (a KeyAlg) String() string {
	switch a {
	case Ed25519:
		return "ed25519"
	case P256:
		return "p256"
	}
	return "unknown"
}

// sigAlgID returns the AlgorithmIdentifier of signatures made by a key of
// alg.
func sigAlgID(alg KeyAlg) []byte {
	if alg == Ed25519 {
		return algEd25519
	}
	return algECDSASHA256
}
