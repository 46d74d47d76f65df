package provkeys_test

import (
	"bytes"
	"encoding/base64"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"pactd.dev/pactd/core/provkeys"
)

func TestLoadKEK(t *testing.T) {
	good := base64.StdEncoding.EncodeToString(testKEK)
	t.Run("ok/configured", func(t *testing.T) {
		for _, enc := range []string{good, base64.RawURLEncoding.EncodeToString(testKEK), " " + good + "\n"} {
			k, err := provkeys.LoadKEK(provkeys.KEKSource{Configured: enc, SharedStore: true})
			if err != nil || !bytes.Equal(k, testKEK) {
				t.Fatalf("LoadKEK(%q) = %x, %v", enc, k, err)
			}
		}
	})
	t.Run("fail/configured-bad", func(t *testing.T) {
		for name, enc := range map[string]string{
			"short":      base64.StdEncoding.EncodeToString(testKEK[:31]),
			"long":       base64.StdEncoding.EncodeToString(append(testKEK, 0)),
			"not-base64": "not base64 at all!",
		} {
			_, err := provkeys.LoadKEK(provkeys.KEKSource{Configured: enc, DataDir: t.TempDir()})
			if err == nil || !strings.Contains(err.Error(), "key-encryption-key") {
				t.Errorf("%s: err = %v", name, err)
			}
			if err != nil && strings.Contains(err.Error(), enc) {
				t.Errorf("%s: the error repeats the configured value", name)
			}
		}
	})
	t.Run("fail/postgres-without-kek", func(t *testing.T) {
		dir := t.TempDir()
		_, err := provkeys.LoadKEK(provkeys.KEKSource{DataDir: dir, SharedStore: true})
		if err == nil || !strings.Contains(err.Error(), "PACT_KEY_ENCRYPTION_KEY") || !strings.Contains(err.Error(), "PostgreSQL") {
			t.Fatalf("err = %v, want a clear refusal naming PACT_KEY_ENCRYPTION_KEY", err)
		}
		if _, err := os.Stat(filepath.Join(dir, provkeys.KEKFileName)); err == nil {
			t.Fatal("a refused start wrote a KEK file")
		}
	})
	t.Run("ok/postgres-dev-generates", func(t *testing.T) {
		k, err := provkeys.LoadKEK(provkeys.KEKSource{DataDir: t.TempDir(), SharedStore: true, Dev: true})
		if err != nil || len(k) != 32 {
			t.Fatalf("LoadKEK(dev) = %d bytes, %v", len(k), err)
		}
	})
	t.Run("ok/generated-file", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		var logs bytes.Buffer
		log := slog.New(slog.NewTextHandler(&logs, nil))
		k1, err := provkeys.LoadKEK(provkeys.KEKSource{DataDir: dir, Logger: log})
		if err != nil || len(k1) != 32 {
			t.Fatalf("first LoadKEK = %d bytes, %v", len(k1), err)
		}
		path := filepath.Join(dir, provkeys.KEKFileName)
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("KEK file mode = %v, %v; want 0600", fi.Mode(), err)
		}
		if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "PACT_KEY_ENCRYPTION_KEY") {
			t.Fatalf("no warning that production must configure the KEK: %s", logs.String())
		}
		if strings.Contains(logs.String(), base64.StdEncoding.EncodeToString(k1)) {
			t.Fatal("the KEK was logged")
		}
		k2, err := provkeys.LoadKEK(provkeys.KEKSource{DataDir: dir})
		if err != nil || !bytes.Equal(k1, k2) {
			t.Fatalf("second LoadKEK returned another key (%v)", err)
		}
		// A configured KEK wins over the file.
		k3, err := provkeys.LoadKEK(provkeys.KEKSource{DataDir: dir, Configured: base64.StdEncoding.EncodeToString(testKEK)})
		if err != nil || !bytes.Equal(k3, testKEK) {
			t.Fatalf("configured KEK did not win: %v", err)
		}
		// A KEK file others can read is refused.
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := provkeys.LoadKEK(provkeys.KEKSource{DataDir: dir}); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Fatalf("world-readable KEK file: err = %v", err)
		}
	})
	t.Run("ok/concurrent-first-starts-agree", func(t *testing.T) {
		dir := t.TempDir()
		const n = 8
		keys := make([][]byte, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				k, err := provkeys.LoadKEK(provkeys.KEKSource{DataDir: dir})
				if err != nil {
					t.Errorf("LoadKEK %d: %v", i, err)
				}
				keys[i] = k
			})
		}
		wg.Wait()
		for i := 1; i < n; i++ {
			if !bytes.Equal(keys[i], keys[0]) {
				t.Fatal("concurrent first starts generated different KEKs")
			}
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Fatalf("data dir holds %d files, want only the KEK (no temporary files left)", len(entries))
		}
	})
}
