package provkeys_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"testing"

	"pactd.dev/pactd/core/provkeys"
	"pactd.dev/pactd/db/dbtest"
)

// TestNoSecretsInLogs logs every secret-holding value and runs a rotation
// with a debug logger, then scans the output for the KEK and the private
// scalars in every encoding.
func TestNoSecretsInLogs(t *testing.T) {
	s := dbtest.Open(t, "", t.TempDir())
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := newClock()
	cfg := provkeys.Config{Store: s, KEK: testKEK, Now: c.Now, Logger: log}
	r, err := provkeys.Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Rotate(t.Context()); err != nil {
		t.Fatal(err)
	}
	src := provkeys.KEKSource{Configured: base64.StdEncoding.EncodeToString(testKEK)}
	log.Info("values", slog.Any("config", cfg), slog.Any("ring", r), slog.Any("kek_source", src))
	if !strings.Contains(logs.String(), "signing key added") || !strings.Contains(logs.String(), `"ring":{`) {
		t.Fatalf("control: expected log lines are missing:\n%s", logs.String())
	}
	secrets := []string{hex.EncodeToString(testKEK), base64.StdEncoding.EncodeToString(testKEK), base64.RawURLEncoding.EncodeToString(testKEK), fmt.Sprint(testKEK)}
	rows, err := s.ListPublishedSigningKeys(t.Context(), c.Now())
	if err != nil || len(rows) != 2 {
		t.Fatalf("keys: %v, %v", rows, err)
	}
	for _, row := range rows {
		priv := privateKeyOf(t, s, c, row.KID)
		d, _ := priv.Bytes()
		secrets = append(secrets, hex.EncodeToString(d), base64.StdEncoding.EncodeToString(d), base64.RawURLEncoding.EncodeToString(d), new(big.Int).SetBytes(d).String(),
			base64.StdEncoding.EncodeToString(row.SealedPrivateKey))
	}
	for _, sec := range secrets {
		if strings.Contains(logs.String(), sec) {
			t.Fatalf("a secret appears in the logs:\n%s", logs.String())
		}
	}
}
