package admin

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/gen/hdtp/v1/hdtpv1connect"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// The hdtp group: HDTP / PACT 2 identities (hdtp.v1.IdentityService), the
// trust helpers (hdtp.v1.TrustService), and an offline development wallet
// (hdtpwallet.go) that plays the person's part on one machine.

func (s *session) hdtpIdentities() hdtpv1connect.IdentityServiceClient {
	return hdtpv1connect.NewIdentityServiceClient(s.client, s.base, s.opts...)
}

func (s *session) hdtpTrust() hdtpv1connect.TrustServiceClient {
	return hdtpv1connect.NewTrustServiceClient(s.client, s.base, s.opts...)
}

var (
	generationNames = map[string]hdtpv1.Generation{"hdtp1": hdtpv1.Generation_GENERATION_HDTP1, "pact2": hdtpv1.Generation_GENERATION_PACT2}
	sealNames       = map[string]hdtpv1.SealPolicy{"none": hdtpv1.SealPolicy_SEAL_POLICY_NONE, "optional": hdtpv1.SealPolicy_SEAL_POLICY_OPTIONAL,
		"required": hdtpv1.SealPolicy_SEAL_POLICY_REQUIRED}
	keyNames            = map[string]hdtpv1.KeyAlgorithm{"ed25519": hdtpv1.KeyAlgorithm_KEY_ALGORITHM_ED25519, "p256": hdtpv1.KeyAlgorithm_KEY_ALGORITHM_P256}
	acceptNewHostsNames = map[string]hdtpv1.AcceptNewHosts{"auto": hdtpv1.AcceptNewHosts_ACCEPT_NEW_HOSTS_AUTO, "ask": hdtpv1.AcceptNewHosts_ACCEPT_NEW_HOSTS_ASK}
	clientCertNames     = map[string]hdtpv1.ClientCertPosture{"off": hdtpv1.ClientCertPosture_CLIENT_CERT_POSTURE_OFF,
		"preferred": hdtpv1.ClientCertPosture_CLIENT_CERT_POSTURE_PREFERRED, "required": hdtpv1.ClientCertPosture_CLIENT_CERT_POSTURE_REQUIRED}
)

func nameOf[V comparable](m map[string]V, v V) string {
	for k, x := range m {
		if x == v {
			return k
		}
	}
	return "-"
}

// pick reads a flag's value from a table of names.
func pick[V any](op, flagName, value string, m map[string]V) (V, error) {
	v, ok := m[value]
	if !ok {
		return v, usageError("%s: -%s must be one of %s, not %q", op, flagName, strings.Join(slices.Sorted(maps.Keys(m)), ", "), value)
	}
	return v, nil
}

func identityFields(w io.Writer, id *hdtpv1.Identity) {
	row(w, "identity id", id.GetIdentityId())
	row(w, "endpoint", id.GetEndpoint())
	row(w, "name", id.GetDisplayName())
	row(w, "generation", nameOf(generationNames, id.GetGeneration()))
	row(w, "seal", nameOf(sealNames, id.GetSeal()))
	row(w, "key algorithm", nameOf(keyNames, id.GetKeyAlgorithm()))
	row(w, "root", id.GetRootFingerprint())
	row(w, "current kid", id.GetCurrentKid())
	row(w, "new hosts", nameOf(acceptNewHostsNames, id.GetAcceptNewHosts()))
	row(w, "client cert", nameOf(clientCertNames, id.GetClientCert()))
	row(w, "created", when(id.GetCreateTime()))
}

// writeRequest prints a signing request, and writes it as JSON to file
// (for hdtp wallet-sign) when one is given.
func writeRequest(s *session, w io.Writer, sr *hdtpv1.SigningRequest, file string) error {
	row(w, "kid", sr.GetKid())
	row(w, "purpose", sr.GetPurpose())
	row(w, "state", sr.GetState())
	row(w, "expires", sr.GetExpires())
	row(w, "expect root", sr.GetExpectRoot())
	row(w, "csr", sr.GetCsr())
	if file == "" {
		return nil
	}
	b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(sr)
	if err != nil {
		return err
	}
	if err := os.WriteFile(file, append(b, '\n'), 0o600); err != nil {
		return failure("%s: -request-out: %v", s.op, err)
	}
	row(w, "written to", file)
	return nil
}

// parseChain reads "<leaf>.<root>", each base64url DER, as a web wallet's
// answer carries it.
func parseChain(op, flagName, v string) ([][]byte, error) {
	parts := strings.Split(v, ".")
	if len(parts) != 2 {
		return nil, usageError("%s: -%s must be <leaf>.<root>, each base64url DER", op, flagName)
	}
	out := make([][]byte, 2)
	for i, p := range parts {
		b, err := base64.RawURLEncoding.DecodeString(p)
		if err != nil {
			return nil, usageError("%s: -%s: certificate %d is not base64url: %v", op, flagName, i, err)
		}
		out[i] = b
	}
	return out, nil
}

func hdtpCommands() []*command {
	return []*command{
		{group: "hdtp", name: "create", args: "ENDPOINT -name NAME", summary: "create an identity at an https endpoint; pactd makes its key and prints the signing request for the person's wallet",
			minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				name := fs.String("name", "", "the person's `name` for the card and the signing request")
				gen := fs.String("generation", "hdtp1", "wire `generation`: hdtp1 (HDTP 1.0) or pact2 (PACT 2.2)")
				seal := fs.String("seal", "required", "seal `policy`: none, optional or required")
				key := fs.String("key-algorithm", "ed25519", "leaf key `algorithm`: ed25519 or p256")
				out := fs.String("request-out", "", "also write the signing request as JSON to `FILE` (for pactd hdtp wallet-sign)")
				return func(ctx context.Context, s *session, args []string) error {
					if err := required(s.op, map[string]string{"-name": *name}); err != nil {
						return err
					}
					req := &hdtpv1.CreateIdentityRequest{Endpoint: args[0], DisplayName: *name}
					var err error
					if req.Generation, err = pick(s.op, "generation", *gen, generationNames); err != nil {
						return err
					}
					if req.Seal, err = pick(s.op, "seal", *seal, sealNames); err != nil {
						return err
					}
					if req.KeyAlgorithm, err = pick(s.op, "key-algorithm", *key, keyNames); err != nil {
						return err
					}
					resp, err := s.hdtpIdentities().CreateIdentity(ctx, req)
					if err != nil {
						return err
					}
					var werr error
					emitErr := s.emit(resp, func(w io.Writer) {
						fmt.Fprintf(w, "created identity %s; give the signing request below to the person's wallet, then run pactd hdtp install\n", resp.GetIdentity().GetIdentityId())
						identityFields(w, resp.GetIdentity())
						werr = writeRequest(s, w, resp.GetSigningRequest(), *out)
					})
					if werr != nil {
						return werr
					}
					if s.json && *out != "" {
						return writeRequest(s, io.Discard, resp.GetSigningRequest(), *out)
					}
					return emitErr
				}
			}},
		{group: "hdtp", name: "list", summary: "list the identities, oldest first",
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				p := addPageFlags(fs)
				return func(ctx context.Context, s *session, _ []string) error {
					resp := &hdtpv1.ListIdentitiesResponse{}
					next, err := p.each(func(page *pactv1.PageRequest) (string, error) {
						r, err := s.hdtpIdentities().ListIdentities(ctx, &hdtpv1.ListIdentitiesRequest{PageSize: page.GetPageSize(), PageToken: page.GetPageToken()})
						if err != nil {
							return "", err
						}
						resp.Identities = append(resp.Identities, r.GetIdentities()...)
						return r.GetNextPageToken(), nil
					})
					if err != nil {
						return err
					}
					resp.NextPageToken = next
					return s.emit(resp, func(w io.Writer) {
						row(w, "IDENTITY", "ENDPOINT", "GENERATION", "SEAL", "ROOT")
						for _, id := range resp.GetIdentities() {
							row(w, id.GetIdentityId(), id.GetEndpoint(), nameOf(generationNames, id.GetGeneration()), nameOf(sealNames, id.GetSeal()), id.GetRootFingerprint())
						}
						p.footer(w, next)
					})
				}
			}},
		{group: "hdtp", name: "get", args: "ID", summary: "show one identity", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				return func(ctx context.Context, s *session, args []string) error {
					resp, err := s.hdtpIdentities().GetIdentity(ctx, &hdtpv1.GetIdentityRequest{IdentityId: args[0]})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) { identityFields(w, resp.GetIdentity()) })
				}
			}},
		{group: "hdtp", name: "update", args: "ID", summary: "change an identity's name, seal policy, key algorithm, generation, new-host or client-certificate policy",
			minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				name := fs.String("name", "", "the new `name`")
				gen := fs.String("generation", "", "the new wire `generation`: hdtp1 or pact2")
				seal := fs.String("seal", "", "the new seal `policy`: none, optional or required")
				key := fs.String("key-algorithm", "", "the `algorithm` of keys made from now on: ed25519 or p256")
				hosts := fs.String("accept-new-hosts", "", "what a contact's newer leaf at another endpoint gets: `auto` (re-pinned) or ask (held for the owner)")
				clientCert := fs.String("client-cert", "", "the client-certificate `posture`: off, preferred or required")
				return func(ctx context.Context, s *session, args []string) error {
					id := &hdtpv1.Identity{IdentityId: args[0]}
					mask := &fieldmaskpb.FieldMask{}
					var err error
					fs.Visit(func(f *flag.Flag) {
						if err != nil {
							return
						}
						switch f.Name {
						case "name":
							id.DisplayName, mask.Paths = *name, append(mask.Paths, "display_name")
						case "generation":
							id.Generation, err = pick(s.op, "generation", *gen, generationNames)
							mask.Paths = append(mask.Paths, "generation")
						case "seal":
							id.Seal, err = pick(s.op, "seal", *seal, sealNames)
							mask.Paths = append(mask.Paths, "seal")
						case "key-algorithm":
							id.KeyAlgorithm, err = pick(s.op, "key-algorithm", *key, keyNames)
							mask.Paths = append(mask.Paths, "key_algorithm")
						case "accept-new-hosts":
							id.AcceptNewHosts, err = pick(s.op, "accept-new-hosts", *hosts, acceptNewHostsNames)
							mask.Paths = append(mask.Paths, "accept_new_hosts")
						case "client-cert":
							id.ClientCert, err = pick(s.op, "client-cert", *clientCert, clientCertNames)
							mask.Paths = append(mask.Paths, "client_cert")
						}
					})
					if err != nil {
						return err
					}
					if len(mask.Paths) == 0 {
						return usageError("%s: name what to change (-name, -seal, -key-algorithm, -generation, -accept-new-hosts, -client-cert)", s.op)
					}
					resp, err := s.hdtpIdentities().UpdateIdentity(ctx, &hdtpv1.UpdateIdentityRequest{Identity: id, UpdateMask: mask})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) { identityFields(w, resp.GetIdentity()) })
				}
			}},
		{group: "hdtp", name: "delete", args: "ID", summary: "erase an identity: its keys, leaves and former kids", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				return func(ctx context.Context, s *session, args []string) error {
					resp, err := s.hdtpIdentities().DeleteIdentity(ctx, &hdtpv1.DeleteIdentityRequest{IdentityId: args[0]})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) { fmt.Fprintf(w, "deleted identity %s\n", args[0]) })
				}
			}},
		{group: "hdtp", name: "request", args: "ID", summary: "make a fresh key for an identity and print its signing request (a renewal)", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				out := fs.String("request-out", "", "also write the signing request as JSON to `FILE` (for pactd hdtp wallet-sign)")
				return func(ctx context.Context, s *session, args []string) error {
					resp, err := s.hdtpIdentities().CreateSigningRequest(ctx, &hdtpv1.CreateSigningRequestRequest{IdentityId: args[0]})
					if err != nil {
						return err
					}
					var werr error
					emitErr := s.emit(resp, func(w io.Writer) { werr = writeRequest(s, w, resp.GetSigningRequest(), *out) })
					if werr != nil {
						return werr
					}
					if s.json && *out != "" {
						return writeRequest(s, io.Discard, resp.GetSigningRequest(), *out)
					}
					return emitErr
				}
			}},
		{group: "hdtp", name: "install", args: "ID -answer 'chain=<leaf>.<root>&state=<state>'", summary: "install the wallet's answer to the pending signing request",
			minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				answer := fs.String("answer", "", "the wallet's `answer`: chain=<leaf>.<root>&state=<state> (the fragment a web wallet returns)")
				return func(ctx context.Context, s *session, args []string) error {
					if err := required(s.op, map[string]string{"-answer": *answer}); err != nil {
						return err
					}
					q, err := url.ParseQuery(strings.TrimPrefix(*answer, "#"))
					if err != nil || len(q["chain"]) != 1 || len(q["state"]) != 1 {
						return usageError("%s: -answer must be chain=<leaf>.<root>&state=<state>", s.op)
					}
					chain, err := parseChain(s.op, "answer", q.Get("chain"))
					if err != nil {
						return err
					}
					resp, err := s.hdtpIdentities().InstallChain(ctx, &hdtpv1.InstallChainRequest{IdentityId: args[0], Chain: chain, State: q.Get("state")})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) {
						fmt.Fprintf(w, "installed leaf %s\n", resp.GetLeaf().GetKid())
						identityFields(w, resp.GetIdentity())
						row(w, "leaf valid", when(resp.GetLeaf().GetNotBefore())+" to "+when(resp.GetLeaf().GetNotAfter()))
					})
				}
			}},
		{group: "hdtp", name: "leaves", args: "ID", summary: "show an identity's leaf ledger: pending, current, superseded and former leaves", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				return func(ctx context.Context, s *session, args []string) error {
					resp, err := s.hdtpIdentities().ListLeaves(ctx, &hdtpv1.ListLeavesRequest{IdentityId: args[0]})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) {
						row(w, "KID", "STATE", "KEY", "NOT BEFORE", "NOT AFTER", "KEY HELD")
						for _, l := range resp.GetLeaves() {
							row(w, l.GetKid(), strings.ToLower(strings.TrimPrefix(l.GetState().String(), "LEAF_STATE_")), nameOf(keyNames, l.GetKeyAlgorithm()),
								when(l.GetNotBefore()), when(l.GetNotAfter()), yesNo(l.GetKeyHeld()))
						}
					})
				}
			}},
		{group: "hdtp", name: "card", args: "ID", summary: "print the identity's card as get_card serves it (-o json: with card_sig, chain and limits)", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				return func(ctx context.Context, s *session, args []string) error {
					resp, err := s.hdtpIdentities().GetCard(ctx, &hdtpv1.GetCardRequest{IdentityId: args[0]})
					if err != nil {
						return err
					}
					if s.json {
						return s.emit(resp, nil)
					}
					_, err = io.WriteString(s.out, strings.ReplaceAll(resp.GetCard(), "\r\n", "\n"))
					return err
				}
			}},
		{group: "hdtp", name: "validate-chain", args: "<leaf>.<root> -generation G", summary: "validate a chain by §14.2 (TrustService.ValidateChain)", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				gen := fs.String("generation", "hdtp1", "wire `generation`: hdtp1 or pact2")
				root := fs.String("root", "", "the expected root's `fingerprint`")
				endpoint := fs.String("endpoint", "", "the expected `endpoint`")
				return func(ctx context.Context, s *session, args []string) error {
					g, err := pick(s.op, "generation", *gen, generationNames)
					if err != nil {
						return err
					}
					chain, err := parseChain(s.op, "chain", args[0])
					if err != nil {
						return err
					}
					resp, err := s.hdtpTrust().ValidateChain(ctx, &hdtpv1.ValidateChainRequest{Generation: g, Chain: chain, ExpectedRoot: *root, ExpectedEndpoint: *endpoint})
					if err != nil {
						return err
					}
					if err := s.emit(resp, func(w io.Writer) {
						if resp.GetValid() {
							row(w, "valid", "yes")
							row(w, "root", resp.GetRoot().GetFingerprint())
							row(w, "leaf (kid)", resp.GetLeaf().GetFingerprint())
							row(w, "endpoint", resp.GetLeaf().GetEndpoint())
							return
						}
						row(w, "valid", "no")
						row(w, "rule", fmt.Sprint(resp.GetRule()))
						row(w, "reason", resp.GetReason())
						row(w, "code", resp.GetCode())
					}); err != nil {
						return err
					}
					if !resp.GetValid() {
						return &Error{Code: 1, Msg: s.op + ": refused: rule " + fmt.Sprint(resp.GetRule()) + " " + resp.GetReason()}
					}
					return nil
				}
			}},
		{group: "hdtp", name: "check-address", args: "ENDPOINT", summary: "check an endpoint's normal form and the address guard (TrustService.CheckAddress)", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				var resolved listFlag
				fs.Var(&resolved, "resolved", "an `IP` the endpoint's host resolved to; repeat for each")
				return func(ctx context.Context, s *session, args []string) error {
					resp, err := s.hdtpTrust().CheckAddress(ctx, &hdtpv1.CheckAddressRequest{Endpoint: args[0], ResolvedAddresses: resolved})
					if err != nil {
						return err
					}
					if err := s.emit(resp, func(w io.Writer) {
						row(w, "valid", yesNo(resp.GetValid()))
						row(w, "host", resp.GetHost())
						row(w, "reason", resp.GetReason())
					}); err != nil {
						return err
					}
					if !resp.GetValid() {
						return &Error{Code: 1, Msg: s.op + ": refused: " + resp.GetReason()}
					}
					return nil
				}
			}},
	}
}
