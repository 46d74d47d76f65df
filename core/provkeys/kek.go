package provkeys

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"pactd.dev/pactd/internal/keyseal"
)

// KEKSize is the size of the key-encryption key: AES-256.
const KEKSize = keyseal.KEKSize

// KEKFileName is the file in the data directory that holds a generated
// key-encryption key when none is configured.
const KEKFileName = "kek"

// KEKSource says where the key-encryption key comes from.
type KEKSource struct {
	// Configured is the base64 (standard or URL alphabet, padded or not)
	// encoding of 32 bytes, from PACT_KEY_ENCRYPTION_KEY; empty when unset.
	Configured string
	// DataDir is where a generated KEK is kept when none is configured.
	DataDir string
	// SharedStore is true when the store is shared by replicas
	// (PostgreSQL): each replica must then have the same KEK, so a KEK
	// generated into one replica's data directory cannot work.
	SharedStore bool
	// Dev allows a generated KEK even with a shared store.
	Dev bool
	// Logger receives the warning about a generated KEK; never the KEK.
	Logger *slog.Logger
}

// LoadKEK returns the key-encryption key.
//
// A configured KEK wins. Without one, pactd refuses to start on a shared
// store (PostgreSQL) unless Dev is set; otherwise it uses the KEK in
// {DataDir}/kek, generating it on first start (mode 0600, created
// exclusively, so concurrent starts agree on one key) and warning on every
// start that production must configure it: a KEK beside the database ends
// up in the same backups. The KEK is never stored in the database.
func LoadKEK(src KEKSource) ([]byte, error) {
	log := src.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if src.Configured != "" {
		k, err := decodeKEK(src.Configured)
		if err != nil {
			return nil, fmt.Errorf("key-encryption-key: %w", err)
		}
		return k, nil
	}
	if src.SharedStore && !src.Dev {
		return nil, errors.New("key-encryption-key: required with PostgreSQL, where replicas share the signing keys " +
			"and each needs the same key-encryption key: set PACT_KEY_ENCRYPTION_KEY to the base64 of 32 random bytes " +
			"(for example `openssl rand -base64 32`); PACT_DEV=true allows a generated local key for development only")
	}
	if src.DataDir == "" {
		return nil, errors.New("key-encryption-key: not configured and no data directory to keep a generated one in")
	}
	if err := os.MkdirAll(src.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("key-encryption-key: create data directory: %w", err)
	}
	path := filepath.Join(src.DataDir, KEKFileName)
	k, created, err := loadOrCreateKEKFile(path)
	if err != nil {
		return nil, err
	}
	msg := "using the key-encryption key from the data directory; production must configure PACT_KEY_ENCRYPTION_KEY " +
		"and keep it apart from the database and its backups"
	if created {
		msg = "generated a key-encryption key in the data directory; production must configure PACT_KEY_ENCRYPTION_KEY " +
			"and keep it apart from the database and its backups"
	}
	log.Warn(msg, slog.String("path", path))
	return k, nil
}

func decodeKEK(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil {
			if len(k) != KEKSize {
				return nil, fmt.Errorf("must decode to exactly %d bytes, got %d", KEKSize, len(k))
			}
			return k, nil
		}
	}
	return nil, fmt.Errorf("must be the base64 encoding of %d bytes", KEKSize)
}

// loadOrCreateKEKFile reads the KEK file or creates it. Creation writes a
// temporary file and hard-links it into place, which fails if the file
// exists: the KEK file appears complete or not at all, and of two
// concurrent starts exactly one creates it and both then use that one.
func loadOrCreateKEKFile(path string) (kek []byte, created bool, err error) {
	if k, err := readKEKFile(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, false, err
	}
	k := make([]byte, KEKSize)
	_, _ = rand.Read(k) // crypto/rand.Read never fails (Go 1.24+)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kek-*")
	if err != nil {
		return nil, false, fmt.Errorf("key-encryption-key: create %s: %w", path, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	// CreateTemp makes the file 0600; say so explicitly all the same.
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return nil, false, fmt.Errorf("key-encryption-key: create %s: %w", path, err)
	}
	_, werr := tmp.WriteString(base64.StdEncoding.EncodeToString(k) + "\n")
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return nil, false, fmt.Errorf("key-encryption-key: write %s: %w", path, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			k, err := readKEKFile(path)
			return k, false, err
		}
		return nil, false, fmt.Errorf("key-encryption-key: create %s: %w", path, err)
	}
	return k, true, nil
}

func readKEKFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("key-encryption-key: %s is accessible to other users (mode %v); chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("key-encryption-key: read %s: %w", path, err)
	}
	k, err := decodeKEK(string(b))
	if err != nil {
		return nil, fmt.Errorf("key-encryption-key: %s: %w", path, err)
	}
	return k, nil
}

// sealer seals and opens the signing keys' private scalars under the KEK,
// with pactd's one key sealing (internal/keyseal), each bound to its kid.
type sealer struct{ s *keyseal.Sealer }

func newSealer(kek []byte) (*sealer, error) {
	s, err := keyseal.New(kek)
	if err != nil {
		return nil, fmt.Errorf("provkeys: %w", err)
	}
	return &sealer{s: s}, nil
}

// additionalData binds a sealed key to its kid.
func additionalData(kid string) []byte { return []byte("pactd signing key v1\x00" + kid) }

// seal returns the sealed raw scalar.
func (s *sealer) seal(kid string, priv *ecdsa.PrivateKey) ([]byte, error) {
	d, err := priv.Bytes()
	if err != nil {
		return nil, fmt.Errorf("provkeys: encode private key: %w", err)
	}
	defer clear(d)
	return s.s.Seal(additionalData(kid), d), nil
}

// open reverses seal and checks that the key's thumbprint is kid.
func (s *sealer) open(kid string, sealed []byte) (*ecdsa.PrivateKey, error) {
	d, err := s.s.Open(additionalData(kid), sealed)
	if err != nil {
		return nil, fmt.Errorf("provkeys: signing key %s does not open with this key-encryption key "+
			"(is PACT_KEY_ENCRYPTION_KEY the one the key was sealed with?)", kid)
	}
	defer clear(d)
	priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
	if err != nil {
		return nil, fmt.Errorf("provkeys: signing key %s: %w", kid, err)
	}
	if tp, err := Thumbprint(&priv.PublicKey); err != nil || tp != kid {
		return nil, fmt.Errorf("provkeys: signing key %s: its kid is not its thumbprint", kid)
	}
	return priv, nil
}

// LogValue redacts the configured KEK, so a KEKSource can be logged.
func (src KEKSource) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Bool("configured", src.Configured != ""), slog.String("data_dir", src.DataDir),
		slog.Bool("shared_store", src.SharedStore), slog.Bool("dev", src.Dev),
	)
}
