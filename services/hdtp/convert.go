package hdtp

import (
	"google.golang.org/protobuf/types/known/timestamppb"

	"pactd.dev/pactd/db"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/internal/hdtp/cert"
)

func sealOf(p hdtpv1.SealPolicy) string {
	switch p {
	case hdtpv1.SealPolicy_SEAL_POLICY_NONE:
		return "none"
	case hdtpv1.SealPolicy_SEAL_POLICY_OPTIONAL:
		return "optional"
	case hdtpv1.SealPolicy_SEAL_POLICY_REQUIRED:
		return "required"
	}
	return ""
}

func sealToProto(s string) hdtpv1.SealPolicy {
	switch s {
	case "none":
		return hdtpv1.SealPolicy_SEAL_POLICY_NONE
	case "optional":
		return hdtpv1.SealPolicy_SEAL_POLICY_OPTIONAL
	case "required":
		return hdtpv1.SealPolicy_SEAL_POLICY_REQUIRED
	}
	return hdtpv1.SealPolicy_SEAL_POLICY_UNSPECIFIED
}

func algOf(a hdtpv1.KeyAlgorithm) string {
	switch a {
	case hdtpv1.KeyAlgorithm_KEY_ALGORITHM_ED25519:
		return "ed25519"
	case hdtpv1.KeyAlgorithm_KEY_ALGORITHM_P256:
		return "p256"
	}
	return ""
}

func algToProto(a string) hdtpv1.KeyAlgorithm {
	switch a {
	case "ed25519":
		return hdtpv1.KeyAlgorithm_KEY_ALGORITHM_ED25519
	case "p256":
		return hdtpv1.KeyAlgorithm_KEY_ALGORITHM_P256
	}
	return hdtpv1.KeyAlgorithm_KEY_ALGORITHM_UNSPECIFIED
}

func certAlgToProto(a cert.KeyAlg) hdtpv1.KeyAlgorithm { return algToProto(a.String()) }

func clientCertOf(p hdtpv1.ClientCertPosture) string {
	switch p {
	case hdtpv1.ClientCertPosture_CLIENT_CERT_POSTURE_OFF:
		return "off"
	case hdtpv1.ClientCertPosture_CLIENT_CERT_POSTURE_PREFERRED:
		return "preferred"
	case hdtpv1.ClientCertPosture_CLIENT_CERT_POSTURE_REQUIRED:
		return "required"
	}
	return ""
}

var clientCertPostures = map[string]hdtpv1.ClientCertPosture{
	"off": hdtpv1.ClientCertPosture_CLIENT_CERT_POSTURE_OFF, "preferred": hdtpv1.ClientCertPosture_CLIENT_CERT_POSTURE_PREFERRED,
	"required": hdtpv1.ClientCertPosture_CLIENT_CERT_POSTURE_REQUIRED,
}

func identityToProto(id db.HDTPIdentity, leaves []db.HDTPLeaf) *hdtpv1.Identity {
	out := &hdtpv1.Identity{IdentityId: id.ID, Generation: generationToProto(id.Generation), Endpoint: id.Endpoint,
		DisplayName: id.DisplayName, Seal: sealToProto(id.Seal), KeyAlgorithm: algToProto(id.KeyAlg), RootFingerprint: id.RootFingerprint,
		CreateTime: timestamppb.New(id.CreateTime), UpdateTime: timestamppb.New(id.UpdateTime), ClientCert: clientCertPostures[id.ClientCert],
		AcceptNewHosts: hdtpv1.AcceptNewHosts_ACCEPT_NEW_HOSTS_AUTO}
	if id.AcceptNewHosts == "ask" {
		out.AcceptNewHosts = hdtpv1.AcceptNewHosts_ACCEPT_NEW_HOSTS_ASK
	}
	if cur := currentLeaf(leaves); cur != nil {
		out.CurrentKid = cur.KID
	}
	return out
}

var leafStates = map[db.HDTPLeafState]hdtpv1.LeafState{
	db.HDTPLeafPending: hdtpv1.LeafState_LEAF_STATE_PENDING, db.HDTPLeafCurrent: hdtpv1.LeafState_LEAF_STATE_CURRENT,
	db.HDTPLeafSuperseded: hdtpv1.LeafState_LEAF_STATE_SUPERSEDED, db.HDTPLeafFormer: hdtpv1.LeafState_LEAF_STATE_FORMER,
}

func leafToProto(l db.HDTPLeaf) *hdtpv1.Leaf {
	out := &hdtpv1.Leaf{Kid: l.KID, State: leafStates[l.State], KeyAlgorithm: algToProto(l.KeyAlg), Certificate: l.Certificate,
		CreateTime: timestamppb.New(l.CreateTime), KeyHeld: l.SealedKey != nil}
	if !l.NotBefore.IsZero() {
		out.NotBefore, out.NotAfter = timestamppb.New(l.NotBefore), timestamppb.New(l.NotAfter)
	}
	if !l.InstallTime.IsZero() {
		out.InstallTime = timestamppb.New(l.InstallTime)
	}
	return out
}

func certToProto(c *cert.Certificate) *hdtpv1.Certificate {
	out := &hdtpv1.Certificate{Fingerprint: c.Fingerprint(), KeyAlgorithm: certAlgToProto(c.KeyAlg), CommonName: c.Subject,
		Endpoint: c.Endpoint, DnsName: c.DNSName, NotBefore: timestamppb.New(c.NotBefore), NotAfter: timestamppb.New(c.NotAfter),
		IsRoot: c.Kind == cert.KindRoot}
	if c.Kind == cert.KindLeaf {
		out.RootFingerprint = c.AuthorityKeyID.Fingerprint()
	}
	return out
}
