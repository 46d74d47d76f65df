package hdtp

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"time"

	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/hdtp/address"
	"pactd.dev/pactd/hdtp/card"
	"pactd.dev/pactd/hdtp/cert"
	"pactd.dev/pactd/hdtp/wire"
	"pactd.dev/pactd/internal/rpcerr"
)

// maxResolved bounds the addresses a caller passes for the guard.
const maxResolved = 64

// ValidateChain validates a chain by §14.2.
func (s *Trust) ValidateChain(_ context.Context, req *hdtpv1.ValidateChainRequest) (*hdtpv1.ValidateChainResponse, error) {
	gen, err := generation(req.GetGeneration())
	if err != nil {
		return nil, err
	}
	o := cert.ChainOptions{Generation: gen, Now: s.at(req.GetTime().AsTime(), req.GetTime() != nil), ExpectedEndpoint: req.GetExpectedEndpoint()}
	if r := req.GetExpectedRoot(); r != "" {
		k, ok := wire.ParseFingerprint(r)
		if !ok {
			return nil, rpcerr.InvalidField("expected_root", "is not a fingerprint (\"sha256:\" and 43 base64url characters)")
		}
		o.ExpectedRoot = &k
	}
	c, err := cert.VerifyChain(req.GetChain(), o)
	if err != nil {
		var e *cert.Error
		if !errors.As(err, &e) {
			return nil, err
		}
		code := wire.CodeEnvelopeInvalid
		switch req.GetContext() {
		case hdtpv1.ChainContext_CHAIN_CONTEXT_CARD:
			code = wire.CodeBadRequest
		case hdtpv1.ChainContext_CHAIN_CONTEXT_TRANSPORT:
			code = ""
		}
		s.m.refused("ValidateChain", string(e.Reason))
		return &hdtpv1.ValidateChainResponse{Rule: int32(e.Rule), Reason: string(e.Reason), Code: string(code), CertificateIndex: int32(e.Cert)}, nil
	}
	return &hdtpv1.ValidateChainResponse{Valid: true, Leaf: certToProto(c.Leaf), Root: certToProto(c.Root)}, nil
}

// at is the time a request asks for, or now.
func (s *Trust) at(t time.Time, set bool) time.Time {
	if set {
		return t
	}
	return s.d.Now()
}

// ParseCard checks a card for intake.
func (s *Trust) ParseCard(_ context.Context, req *hdtpv1.ParseCardRequest) (*hdtpv1.ParseCardResponse, error) {
	gen, err := generation(req.GetGeneration())
	if err != nil {
		return nil, err
	}
	resolved, err := addrs("resolved_addresses", req.GetResolvedAddresses())
	if err != nil {
		return nil, err
	}
	refuse := func(r *hdtpv1.ParseCardResponse) (*hdtpv1.ParseCardResponse, error) {
		r.Code = string(card.Code)
		s.m.refused("ParseCard", r.Reason)
		return r, nil
	}
	c, err := card.Read(gen, req.GetCard())
	if err != nil {
		var e *card.Error
		if !errors.As(err, &e) {
			return nil, err
		}
		return refuse(&hdtpv1.ParseCardResponse{Reason: string(e.Reason), CertificateReason: string(e.CertReason)})
	}
	if err := s.d.guard().Check(c.Leaf.Endpoint, resolved); err != nil {
		return refuse(&hdtpv1.ParseCardResponse{Reason: "address", AddressReason: string(address.ReasonOf(err))})
	}
	if r := req.GetReceiverEndpoint(); r != "" && r == c.Leaf.Endpoint {
		return refuse(&hdtpv1.ParseCardResponse{Reason: "own_endpoint"})
	}
	return &hdtpv1.ParseCardResponse{Valid: true, DisplayName: c.Name, Seal: string(c.Seal), Leaf: certToProto(c.Leaf), LeafDer: c.Leaf.Raw,
		LeafExpired: s.d.Now().After(c.Leaf.NotAfter)}, nil
}

// VerifyCardSignature checks a served card's chain, certificate and
// card_sig.
func (s *Trust) VerifyCardSignature(_ context.Context, req *hdtpv1.VerifyCardSignatureRequest) (*hdtpv1.VerifyCardSignatureResponse, error) {
	gen, err := generation(req.GetGeneration())
	if err != nil {
		return nil, err
	}
	o := cert.ChainOptions{Generation: gen, Now: s.at(req.GetTime().AsTime(), req.GetTime() != nil), ExpectedEndpoint: req.GetExpectedEndpoint()}
	if r := req.GetExpectedRoot(); r != "" {
		k, ok := wire.ParseFingerprint(r)
		if !ok {
			return nil, rpcerr.InvalidField("expected_root", "is not a fingerprint")
		}
		o.ExpectedRoot = &k
	}
	refuse := func(r *hdtpv1.VerifyCardSignatureResponse) (*hdtpv1.VerifyCardSignatureResponse, error) {
		r.Code = string(wire.CodeBadRequest)
		s.m.refused("VerifyCardSignature", r.Reason)
		return r, nil
	}
	chain, err := cert.VerifyChain(req.GetChain(), o)
	if err != nil {
		return refuse(&hdtpv1.VerifyCardSignatureResponse{Reason: "chain", Rule: int32(cert.RuleOf(err)), ChainReason: string(cert.ReasonOf(err))})
	}
	c, err := card.Read(gen, req.GetCard())
	if err != nil {
		return refuse(&hdtpv1.VerifyCardSignatureResponse{Reason: "card", CardReason: string(card.ReasonOf(err))})
	}
	if !bytes.Equal(c.Leaf.Raw, chain.Leaf.Raw) {
		return refuse(&hdtpv1.VerifyCardSignatureResponse{Reason: "cert_mismatch"})
	}
	if !card.VerifySig(chain.Leaf, req.GetCard(), req.GetCardSig()) {
		return refuse(&hdtpv1.VerifyCardSignatureResponse{Reason: "signature"})
	}
	return &hdtpv1.VerifyCardSignatureResponse{Valid: true, Leaf: certToProto(chain.Leaf)}, nil
}

var comparisons = map[cert.Comparison]hdtpv1.LeafComparison{
	cert.Same: hdtpv1.LeafComparison_LEAF_COMPARISON_SAME, cert.Renewal: hdtpv1.LeafComparison_LEAF_COMPARISON_RENEWAL,
	cert.NewAddress: hdtpv1.LeafComparison_LEAF_COMPARISON_NEW_ADDRESS, cert.Superseded: hdtpv1.LeafComparison_LEAF_COMPARISON_SUPERSEDED,
	cert.Conflict: hdtpv1.LeafComparison_LEAF_COMPARISON_CONFLICT,
}

// CompareLeaves compares a presented leaf with the pinned one.
func (s *Trust) CompareLeaves(_ context.Context, req *hdtpv1.CompareLeavesRequest) (*hdtpv1.CompareLeavesResponse, error) {
	gen, err := generation(req.GetGeneration())
	if err != nil {
		return nil, err
	}
	pinned, err := cert.Parse(req.GetPinned(), cert.KindLeaf, gen)
	if err != nil {
		s.m.refused("CompareLeaves", "pinned")
		return &hdtpv1.CompareLeavesResponse{Reason: "pinned", CertificateReason: string(cert.ReasonOf(err))}, nil
	}
	presented, err := cert.Parse(req.GetPresented(), cert.KindLeaf, gen)
	if err != nil {
		s.m.refused("CompareLeaves", "presented")
		return &hdtpv1.CompareLeavesResponse{Reason: "presented", CertificateReason: string(cert.ReasonOf(err))}, nil
	}
	if pinned.AuthorityKeyID != presented.AuthorityKeyID {
		s.m.refused("CompareLeaves", "different_roots")
		return &hdtpv1.CompareLeavesResponse{Reason: "different_roots"}, nil
	}
	return &hdtpv1.CompareLeavesResponse{Comparison: comparisons[cert.Compare(pinned, presented)]}, nil
}

// Fingerprint names a certificate's or a key's key.
func (s *Trust) Fingerprint(_ context.Context, req *hdtpv1.FingerprintRequest) (*hdtpv1.FingerprintResponse, error) {
	gen := wire.HDTP1 // a root's end date is HDTP's wider rule; a PACT root passes it too
	if req.GetGeneration() != hdtpv1.Generation_GENERATION_UNSPECIFIED {
		var err error
		if gen, err = generation(req.GetGeneration()); err != nil {
			return nil, err
		}
	}
	refuse := func(r cert.Reason) (*hdtpv1.FingerprintResponse, error) {
		s.m.refused("Fingerprint", string(r))
		return &hdtpv1.FingerprintResponse{Reason: string(r)}, nil
	}
	switch in := req.GetInput().(type) {
	case *hdtpv1.FingerprintRequest_Certificate:
		c, err := cert.Parse(in.Certificate, cert.KindLeaf, gen)
		if err != nil {
			var rootErr error
			if c, rootErr = cert.Parse(in.Certificate, cert.KindRoot, gen); rootErr != nil {
				return refuse(cert.ReasonOf(err))
			}
		}
		return &hdtpv1.FingerprintResponse{Valid: true, Fingerprint: c.Fingerprint(), KeyId: c.KeyID[:], KeyAlgorithm: certAlgToProto(c.KeyAlg),
			Certificate: certToProto(c)}, nil
	case *hdtpv1.FingerprintRequest_PublicKey:
		k, err := cert.ParseKey(in.PublicKey)
		if err != nil {
			return refuse(cert.ReasonOf(err))
		}
		return &hdtpv1.FingerprintResponse{Valid: true, Fingerprint: k.KeyID.Fingerprint(), KeyId: k.KeyID[:], KeyAlgorithm: certAlgToProto(k.Alg)}, nil
	}
	return nil, rpcerr.InvalidField("input", "give a certificate or a public_key")
}

// CheckAddress checks an endpoint's normal form and where it points.
func (s *Trust) CheckAddress(_ context.Context, req *hdtpv1.CheckAddressRequest) (*hdtpv1.CheckAddressResponse, error) {
	resolved, err := addrs("resolved_addresses", req.GetResolvedAddresses())
	if err != nil {
		return nil, err
	}
	if err := s.d.guard().Check(req.GetEndpoint(), resolved); err != nil {
		r := string(address.ReasonOf(err))
		s.m.refused("CheckAddress", r)
		return &hdtpv1.CheckAddressResponse{Code: string(wire.CodeBadRequest), Reason: r, Host: address.Host(req.GetEndpoint())}, nil
	}
	return &hdtpv1.CheckAddressResponse{Valid: true, Host: address.Host(req.GetEndpoint())}, nil
}

// addrs parses IP address literals.
func addrs(field string, ss []string) ([]netip.Addr, error) {
	if len(ss) > maxResolved {
		return nil, rpcerr.InvalidField(field, "at most %d addresses", maxResolved)
	}
	out := make([]netip.Addr, 0, len(ss))
	for _, s := range ss {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, rpcerr.InvalidField(field, "%q is not an IP address", s)
		}
		out = append(out, a)
	}
	return out, nil
}
