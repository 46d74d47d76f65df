package card_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"pactd.dev/pactd/hdtp/card"
	"pactd.dev/pactd/hdtp/cert"
	"pactd.dev/pactd/hdtp/hdtptest"
	"pactd.dev/pactd/hdtp/wire"
)

func load(t testing.TB, gen wire.Generation) *hdtptest.Vectors {
	t.Helper()
	v, err := hdtptest.Load(gen)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestVectorSignedCard: pactd writes HDTP's published card byte for byte
// from leaf_a, signs it to the published card_sig (Ed25519 is
// deterministic), verifies the published card_sig, and reads the card
// back to leaf_a.
func TestVectorSignedCard(t *testing.T) {
	v := load(t, wire.HDTP1)
	sc := v.SignedCard
	leafDER := v.Certificates[sc.Leaf].DER
	written, err := card.Write(wire.HDTP1, "Alina Rao", leafDER, card.SealRequired)
	if err != nil {
		t.Fatal(err)
	}
	if written != sc.Card {
		t.Fatalf("written card differs from the published one:\n%q\n%q", written, sc.Card)
	}
	sig, err := card.Sign(v.LeafKeys[sc.Leaf], sc.Card)
	if err != nil || sig != sc.CardSig {
		t.Fatalf("card_sig = %s, %v; published %s", sig, err, sc.CardSig)
	}
	c, err := card.Read(wire.HDTP1, sc.Card)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(c.Leaf.Raw, leafDER) || c.Seal != card.SealRequired || c.Name != "Alina Rao" {
		t.Fatalf("read = %+v", c)
	}
	if !card.VerifySig(c.Leaf, sc.Card, sc.CardSig) {
		t.Fatal("the published card_sig does not verify")
	}
	// 43. The same card with CRLF turned into LF still reads, but its
	// card_sig no longer verifies.
	lf := strings.ReplaceAll(sc.Card, "\r\n", "\n")
	if _, err := card.Read(wire.HDTP1, lf); err != nil {
		t.Fatalf("LF card: %v", err)
	}
	if card.VerifySig(c.Leaf, lf, sc.CardSig) {
		t.Fatal("card_sig verifies over LF line ends")
	}
}

// TestWriteReadBothGenerations: a card written for a generation reads back
// in it, for every seal policy and for names that need escaping or
// folding; it is refused by the other generation as that generation's
// card; every written line fits in 75 octets.
func TestWriteReadBothGenerations(t *testing.T) {
	for _, gen := range []wire.Generation{wire.PACT2, wire.HDTP1} {
		v := load(t, gen)
		for _, leafName := range []string{"leaf_a", "leaf_b"} {
			leaf := v.Certificates[leafName].DER
			for _, seal := range []card.Seal{card.SealNone, card.SealOptional, card.SealRequired} {
				for _, name := range []string{"Alina Rao", `Rao, Alina; \ the first`, strings.Repeat("Ålina ", 40)} {
					text, err := card.Write(gen, name, leaf, seal)
					if err != nil {
						t.Fatal(err)
					}
					for _, l := range strings.Split(strings.TrimSuffix(text, "\r\n"), "\r\n") {
						if len(l) > 75 {
							t.Fatalf("a line of %d octets", len(l))
						}
					}
					c, err := card.Read(gen, text)
					if err != nil {
						t.Fatalf("%s %s: %v", gen, leafName, err)
					}
					if c.Name != name || c.Seal != seal || !bytes.Equal(c.Leaf.Raw, leaf) {
						t.Fatalf("%s: read back %q %s", gen, c.Name, c.Seal)
					}
					if _, err := card.Read(gen.Other(), text); card.ReasonOf(err) != card.ReasonOtherGeneration {
						t.Fatalf("%s card read as %s: %v", gen, gen.Other(), err)
					}
				}
			}
		}
	}
	for _, bad := range []string{"Alina\r\nX-HDTP-SEAL:none", "Alina\x00", "Alina\u0085", "Alina\u2028"} {
		if _, err := card.Write(wire.HDTP1, bad, load(t, wire.HDTP1).Certificates["leaf_a"].DER, card.SealRequired); err == nil {
			t.Errorf("Write(%q) wrote a control character", bad)
		}
	}
}

// TestIntakeRefusals runs hdtp.md §8 items 34 to 43 that a card reader
// decides, with the reason each is refused for, and the accepted cases of
// the same group.
func TestIntakeRefusals(t *testing.T) {
	hv := load(t, wire.HDTP1)
	pv := load(t, wire.PACT2)
	base := hv.SignedCard.Card
	write := func(t *testing.T, gen wire.Generation, v *hdtptest.Vectors, leaf string) string {
		s, err := card.Write(gen, "Alina Rao", v.Certificates[leaf].DER, card.SealRequired)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	unfoldCert := func(s string) string { return strings.ReplaceAll(s, "\r\n ", "") }
	type tc struct {
		name       string
		gen        wire.Generation
		text       string
		want       card.Reason
		certReason cert.Reason
		seal       card.Seal // for accepted cards
	}
	pactCard := write(t, wire.PACT2, pv, "leaf_a")
	cases := []tc{
		{name: "control: the published card", gen: wire.HDTP1, text: base, seal: card.SealRequired},
		{name: "control: a PACT card", gen: wire.PACT2, text: pactCard, seal: card.SealRequired},
		{name: "control: lowercase property names", gen: wire.HDTP1, text: strings.Replace(strings.Replace(base, "X-HDTP-CERT", "x-hdtp-cert", 1), "X-HDTP-SEAL", "x-hdtp-Seal", 1), seal: card.SealRequired},
		{name: "control: a grouped property and a parameter", gen: wire.HDTP1, text: strings.Replace(base, "X-HDTP-SEAL:", `item1.X-HDTP-SEAL;X-Note="a:b":`, 1), seal: card.SealRequired},
		{name: "control: no X-HDTP-SEAL is none", gen: wire.HDTP1, text: strings.Replace(base, "X-HDTP-SEAL:required\r\n", "", 1), seal: card.SealNone},
		{name: "control: unknown X- properties are ignored", gen: wire.HDTP1, text: strings.Replace(base, "END:VCARD", "X-HDTP-GATEWAY:https://g.example/x\r\nX-PACT-CERT:AAAA\r\nEND:VCARD", 1), seal: card.SealRequired},
		{name: "34 no X-HDTP-CERT", gen: wire.HDTP1, text: strings.Replace(unfoldCert(base), "X-HDTP-CERT:", "X-HDTP-NOTE:", 1), want: card.ReasonCertMissing},
		{name: "35 X-HDTP-VERSION:2", gen: wire.HDTP1, text: strings.Replace(base, "X-HDTP-VERSION:1", "X-HDTP-VERSION:2", 1), want: card.ReasonVersion},
		{name: "35 version missing", gen: wire.HDTP1, text: strings.Replace(base, "X-HDTP-VERSION:1\r\n", "", 1), want: card.ReasonVersionMissing},
		{name: "35 a PACT card to an HDTP identity", gen: wire.HDTP1, text: pactCard, want: card.ReasonOtherGeneration},
		{name: "35 an HDTP card to a PACT identity", gen: wire.PACT2, text: base, want: card.ReasonOtherGeneration},
		{name: "36 a leaf valid for 404 days", gen: wire.HDTP1, text: write(t, wire.HDTP1, hv, "leaf_a_long"), want: card.ReasonCertificate, certReason: cert.ReasonLeafSpan},
		{name: "36 a 3-byte AKI", gen: wire.HDTP1, text: write(t, wire.HDTP1, hv, "leaf_a_aki3"), want: card.ReasonCertificate, certReason: cert.ReasonAuthorityKeyID},
		{name: "16 the high-S twin", gen: wire.HDTP1, text: write(t, wire.HDTP1, hv, "leaf_b_twin"), want: card.ReasonCertificate, certReason: cert.ReasonHighS},
		{name: "a root as the card's certificate", gen: wire.HDTP1, text: write(t, wire.HDTP1, hv, "root_a"), want: card.ReasonCertificate, certReason: cert.ReasonBasicConstraints},
		{name: "37 an expired leaf is accepted", gen: wire.HDTP1, text: write(t, wire.HDTP1, hv, "leaf_a_expired"), seal: card.SealRequired},
		{name: "40 two X-HDTP-SEAL lines: the first wins", gen: wire.HDTP1, text: strings.Replace(base, "X-HDTP-SEAL:required\r\n", "X-HDTP-SEAL:required\r\nX-HDTP-SEAL:none\r\n", 1), seal: card.SealRequired},
		{name: "40 a later X-HDTP-SEAL:none cannot override", gen: wire.HDTP1, text: strings.Replace(base, "END:VCARD", "X-HDTP-SEAL:none\r\nEND:VCARD", 1), seal: card.SealRequired},
		{name: "41 HDTP: fold spaces lost", gen: wire.HDTP1, text: strings.ReplaceAll(base, "\r\n ", "\r\n"), seal: card.SealRequired},
		{name: "41 HDTP: LF line ends, blank and indented lines in the cert", gen: wire.HDTP1,
			text: strings.ReplaceAll(strings.ReplaceAll(base, "\r\n ", "\n\n   "), "\r\n", "\n"), seal: card.SealRequired},
		{name: "41 PACT: fold spaces lost", gen: wire.PACT2, text: strings.ReplaceAll(pactCard, "\r\n ", "\r\n"), want: card.ReasonCertEncoding},
		{name: "42 HDTP: a no-break space inside the cert", gen: wire.HDTP1, text: strings.Replace(base, "\r\n uYSBS", "\r\n uYSB\u00a0S", 1), want: card.ReasonCertEncoding},
		{name: "42 HDTP: a dot inside the cert", gen: wire.HDTP1, text: strings.Replace(base, "\r\n uYSBS", "\r\n uYSB.S", 1), want: card.ReasonCertEncoding},
		{name: "padding on the cert", gen: wire.PACT2, text: strings.Replace(unfoldCert(pactCard), "\r\nX-PACT-SEAL", "=\r\nX-PACT-SEAL", 1), want: card.ReasonCertEncoding},
		{name: "X-HDTP-SEAL outside the three", gen: wire.HDTP1, text: strings.Replace(base, "X-HDTP-SEAL:required", "X-HDTP-SEAL:REQUIRED", 1), want: card.ReasonSeal},
		{name: "no BEGIN:VCARD", gen: wire.HDTP1, text: strings.Replace(base, "BEGIN:VCARD\r\n", "", 1), want: card.ReasonStructure},
		{name: "no END:VCARD", gen: wire.HDTP1, text: strings.Replace(base, "END:VCARD\r\n", "", 1), want: card.ReasonStructure},
		{name: "VERSION:3.0", gen: wire.HDTP1, text: strings.Replace(base, "VERSION:4.0", "VERSION:3.0", 1), want: card.ReasonStructure},
		{name: "a second card after the first", gen: wire.HDTP1, text: base + base, want: card.ReasonStructure},
		{name: "not UTF-8", gen: wire.HDTP1, text: strings.Replace(base, "Alina", "Al\xffina", 1), want: card.ReasonEncoding},
		{name: "over 16 KiB", gen: wire.HDTP1, text: strings.Replace(base, "FN:", "NOTE:"+strings.Repeat("x", card.MaxBytes)+"\r\nFN:", 1), want: card.ReasonTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := card.Read(c.gen, c.text)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if got.Seal != c.seal || got.Leaf.Endpoint == "" {
					t.Fatalf("read = %+v", got)
				}
				return
			}
			var e *card.Error
			if err == nil || card.ReasonOf(err) != c.want {
				t.Fatalf("err = %v, want %s", err, c.want)
			}
			if c.certReason != "" {
				if !errors.As(err, &e) || e.CertReason != c.certReason {
					t.Fatalf("err = %v, want certificate reason %s", err, c.certReason)
				}
			}
		})
	}
}

// FuzzRead: no input stops the reader in either generation, and every
// refusal names its reason.
func FuzzRead(f *testing.F) {
	v := load(f, wire.HDTP1)
	f.Add(v.SignedCard.Card)
	f.Add(strings.ReplaceAll(v.SignedCard.Card, "\r\n ", "\n"))
	f.Fuzz(func(t *testing.T, text string) {
		for _, gen := range []wire.Generation{wire.PACT2, wire.HDTP1} {
			c, err := card.Read(gen, text)
			if err != nil {
				if card.ReasonOf(err) == "" {
					t.Fatalf("a refusal without a reason: %v", err)
				}
				continue
			}
			if c.Leaf == nil || !c.Seal.Valid() {
				t.Fatalf("accepted card = %+v", c)
			}
		}
	})
}
