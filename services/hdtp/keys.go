package hdtp

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"fmt"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/hdtp/cert"
	"pactd.dev/pactd/hdtp/wire"
)

// A leaf key lives in pactd only. It is generated here, written to the
// store only as its PKCS #8 DER sealed under the key-encryption key and
// bound to its identity and kid (so a sealed key moved to another row does
// not open), and unsealed only in memory, for the one signature it is
// needed for; the PKCS #8 bytes are cleared as soon as they are read.

// keyBinding is the additional data a leaf key is sealed with.
func keyBinding(identityID, kid string) []byte {
	return []byte("pactd hdtp leaf key v1\x00" + identityID + "\x00" + kid)
}

// newKey generates a leaf key of the algorithm ("ed25519" or "p256").
func newKey(alg string) (crypto.Signer, error) {
	if alg == "p256" {
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	_, k, err := ed25519.GenerateKey(rand.Reader)
	return k, err
}

// sealKey returns the key's kid and its sealed form.
func (s *Identities) sealKey(identityID string, key crypto.Signer) (kid string, sealed []byte, err error) {
	spki, err := cert.SPKIOf(key.Public())
	if err != nil {
		return "", nil, err
	}
	kid = wire.KeyIDOf(spki).Fingerprint()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", nil, err
	}
	defer clear(der)
	return kid, s.d.Sealer.Seal(keyBinding(identityID, kid), der), nil
}

// openKey unseals a ledger row's key and checks that it is the key its
// kid names.
func (s *Identities) openKey(l db.HDTPLeaf) (crypto.Signer, error) {
	if l.SealedKey == nil {
		return nil, errors.New("the leaf's key is destroyed")
	}
	der, err := s.d.Sealer.Open(keyBinding(l.IdentityID, l.KID), l.SealedKey)
	if err != nil {
		return nil, fmt.Errorf("leaf key %s does not open (is PACT_KEY_ENCRYPTION_KEY the one it was sealed with?)", l.KID)
	}
	defer clear(der)
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("leaf key %s: %w", l.KID, err)
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("leaf key %s is a %T", l.KID, k)
	}
	spki, err := cert.SPKIOf(signer.Public())
	if err != nil || wire.KeyIDOf(spki).Fingerprint() != l.KID {
		return nil, fmt.Errorf("leaf key %s is not the key its kid names", l.KID)
	}
	return signer, nil
}
