package provkeys

import "crypto/ecdsa"

// OpenSealedForTest opens a sealed private key the way the ring does, so
// tests can compare what is stored with the key it hides.
func OpenSealedForTest(kek []byte, kid string, sealed []byte) (*ecdsa.PrivateKey, error) {
	s, err := newSealer(kek)
	if err != nil {
		return nil, err
	}
	return s.open(kid, sealed)
}
