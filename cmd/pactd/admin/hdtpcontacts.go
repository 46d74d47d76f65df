package admin

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"google.golang.org/protobuf/proto"

	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/gen/hdtp/v1/hdtpv1connect"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// The hdtp contact and hdtp invite commands: the owner's side of an
// identity's contacts (hdtp.v1.ContactService) and invites
// (hdtp.v1.InviteService). A command that tells the contact something
// prints the call the host must deliver: its endpoint and JSON-RPC body
// (-call-out writes the body to a file), and the handle for
// OpenOutboundResult.

func (s *session) hdtpContacts() hdtpv1connect.ContactServiceClient {
	return hdtpv1connect.NewContactServiceClient(s.client, s.base, s.opts...)
}

func (s *session) hdtpInvites() hdtpv1connect.InviteServiceClient {
	return hdtpv1connect.NewInviteServiceClient(s.client, s.base, s.opts...)
}

var contactStateNames = map[string]hdtpv1.ContactState{
	"active": hdtpv1.ContactState_CONTACT_STATE_ACTIVE, "pending_in": hdtpv1.ContactState_CONTACT_STATE_PENDING_IN,
	"pending_out": hdtpv1.ContactState_CONTACT_STATE_PENDING_OUT, "blocked": hdtpv1.ContactState_CONTACT_STATE_BLOCKED,
}

func contactFields(w io.Writer, c *hdtpv1.Contact) {
	if c == nil {
		return
	}
	row(w, "root", c.GetRoot())
	row(w, "state", nameOf(contactStateNames, c.GetState()))
	row(w, "name", c.GetDisplayName())
	row(w, "endpoint", c.GetEndpoint())
	row(w, "leaf", c.GetLeafKid())
	row(w, "permissions", strings.Join(c.GetPermissions(), " "))
	row(w, "preset", c.GetPreset())
	row(w, "their permissions", strings.Join(c.GetTheirPermissions(), " "))
	if c.GetInviteLabel() != "" {
		row(w, "invite", c.GetInviteLabel())
	}
	if c.GetNote() != "" {
		row(w, "note", c.GetNote())
	}
	if c.GetBorrowedFromRoot() != "" {
		row(w, "address also pinned for", c.GetBorrowedFromRoot())
	}
	if a := c.GetPendingAddress(); a != nil {
		row(w, "new address", a.GetEndpoint()+" (leaf "+a.GetLeafKid()+", seen "+when(a.GetSeenTime())+")")
		if a.GetBorrowedFromRoot() != "" {
			row(w, "pinned for", a.GetBorrowedFromRoot())
		}
	}
}

// callFields prints an outbound call and writes its body to file when one
// is given.
func callFields(s *session, w io.Writer, c *hdtpv1.OutboundCall, file string) error {
	if c == nil {
		return nil
	}
	row(w, "deliver to", c.GetEndpoint())
	row(w, "call handle", c.GetCallHandle())
	if file == "" {
		row(w, "request body", string(c.GetRequestBody()))
		return nil
	}
	if err := os.WriteFile(file, c.GetRequestBody(), 0o600); err != nil {
		return failure("%s: -call-out: %v", s.op, err)
	}
	row(w, "request body", "written to "+file)
	return nil
}

// permFlags are -preset and -permission.
type permFlags struct {
	preset *string
	perms  listFlag
}

func addPermFlags(fs *flag.FlagSet) *permFlags {
	p := &permFlags{preset: fs.String("preset", "", "a permissions `preset`: basic, work, friend or family")}
	fs.Var(&p.perms, "permission", "a `permission` (message.text, message.media, status.view, calendar.availability, calendar.book, integration.<slug>); repeat for each")
	return p
}

// contactCommand is a command on one contact, ID ROOT.
func contactCommand(name, summary string, setup func(fs *flag.FlagSet) func(ctx context.Context, s *session, id, root string) error) *command {
	return &command{group: "hdtp", name: "contact " + name, args: "ID ROOT", summary: summary, minArgs: 2, maxArgs: 2,
		setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
			run := setup(fs)
			return func(ctx context.Context, s *session, args []string) error { return run(ctx, s, args[0], args[1]) }
		}}
}

func hdtpContactCommands() []*command {
	showContact := func(s *session, m interface {
		proto.Message
		GetContact() *hdtpv1.Contact
	}) error {
		return s.emit(m, func(w io.Writer) { contactFields(w, m.GetContact()) })
	}
	return []*command{
		{group: "hdtp", name: "contact list", args: "ID", summary: "list an identity's contacts, by root", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				state := fs.String("state", "", "only contacts in this `state`: active, pending_in, pending_out or blocked")
				p := addPageFlags(fs)
				return func(ctx context.Context, s *session, args []string) error {
					req := &hdtpv1.ListContactsRequest{IdentityId: args[0]}
					if *state != "" {
						var err error
						if req.State, err = pick(s.op, "state", *state, contactStateNames); err != nil {
							return err
						}
					}
					resp := &hdtpv1.ListContactsResponse{}
					next, err := p.each(func(page *pactv1.PageRequest) (string, error) {
						req.PageSize, req.PageToken = page.GetPageSize(), page.GetPageToken()
						r, err := s.hdtpContacts().ListContacts(ctx, req)
						if err != nil {
							return "", err
						}
						resp.Contacts = append(resp.Contacts, r.GetContacts()...)
						return r.GetNextPageToken(), nil
					})
					if err != nil {
						return err
					}
					resp.NextPageToken = next
					return s.emit(resp, func(w io.Writer) {
						row(w, "ROOT", "STATE", "NAME", "ENDPOINT", "PERMISSIONS")
						for _, c := range resp.GetContacts() {
							row(w, c.GetRoot(), nameOf(contactStateNames, c.GetState()), c.GetDisplayName(), c.GetEndpoint(), strings.Join(c.GetPermissions(), " "))
						}
						p.footer(w, next)
					})
				}
			}},
		contactCommand("get", "show one contact", func(fs *flag.FlagSet) func(context.Context, *session, string, string) error {
			return func(ctx context.Context, s *session, id, root string) error {
				resp, err := s.hdtpContacts().GetContact(ctx, &hdtpv1.GetContactRequest{IdentityId: id, Root: root})
				if err != nil {
					return err
				}
				return showContact(s, resp)
			}
		}),
		contactCommand("approve", "approve a waiting request with a preset or permissions; prints the contact_accepted call to deliver",
			func(fs *flag.FlagSet) func(context.Context, *session, string, string) error {
				p := addPermFlags(fs)
				out := fs.String("call-out", "", "write the call's JSON-RPC body to `FILE`")
				return func(ctx context.Context, s *session, id, root string) error {
					resp, err := s.hdtpContacts().ApproveContact(ctx, &hdtpv1.ApproveContactRequest{IdentityId: id, Root: root, Preset: *p.preset, Permissions: p.perms})
					if err != nil {
						return err
					}
					var cerr error
					err = s.emit(resp, func(w io.Writer) { contactFields(w, resp.GetContact()); cerr = callFields(s, w, resp.GetCall(), *out) })
					return firstErr(cerr, err)
				}
			}),
		contactCommand("reject", "reject a waiting request; prints the contact_rejected call to deliver",
			func(fs *flag.FlagSet) func(context.Context, *session, string, string) error {
				reason := fs.String("reason", "", "an optional `reason` sent with the rejection (at most 1024 bytes)")
				out := fs.String("call-out", "", "write the call's JSON-RPC body to `FILE`")
				return func(ctx context.Context, s *session, id, root string) error {
					resp, err := s.hdtpContacts().RejectContact(ctx, &hdtpv1.RejectContactRequest{IdentityId: id, Root: root, Reason: *reason})
					if err != nil {
						return err
					}
					var cerr error
					err = s.emit(resp, func(w io.Writer) { cerr = callFields(s, w, resp.GetCall(), *out) })
					return firstErr(cerr, err)
				}
			}),
		contactCommand("block", "block a contact: from now on it is answered as a stranger", func(fs *flag.FlagSet) func(context.Context, *session, string, string) error {
			return func(ctx context.Context, s *session, id, root string) error {
				resp, err := s.hdtpContacts().BlockContact(ctx, &hdtpv1.BlockContactRequest{IdentityId: id, Root: root})
				if err != nil {
					return err
				}
				return showContact(s, resp)
			}
		}),
		contactCommand("unblock", "lift a block: an active contact before is active again, any other is forgotten",
			func(fs *flag.FlagSet) func(context.Context, *session, string, string) error {
				return func(ctx context.Context, s *session, id, root string) error {
					resp, err := s.hdtpContacts().UnblockContact(ctx, &hdtpv1.UnblockContactRequest{IdentityId: id, Root: root})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) {
						if resp.GetContact() == nil {
							fmt.Fprintf(w, "unblocked and forgotten %s\n", root)
						}
						contactFields(w, resp.GetContact())
					})
				}
			}),
		contactCommand("remove", "remove a contact (a tombstone is kept 30 days); prints the remove_contact call for an active one",
			func(fs *flag.FlagSet) func(context.Context, *session, string, string) error {
				out := fs.String("call-out", "", "write the call's JSON-RPC body to `FILE`")
				return func(ctx context.Context, s *session, id, root string) error {
					resp, err := s.hdtpContacts().RemoveContact(ctx, &hdtpv1.RemoveContactRequest{IdentityId: id, Root: root})
					if err != nil {
						return err
					}
					var cerr error
					err = s.emit(resp, func(w io.Writer) {
						fmt.Fprintf(w, "removed %s\n", root)
						cerr = callFields(s, w, resp.GetCall(), *out)
					})
					return firstErr(cerr, err)
				}
			}),
		contactCommand("permissions", "set an active contact's permissions by preset or list", func(fs *flag.FlagSet) func(context.Context, *session, string, string) error {
			p := addPermFlags(fs)
			none := fs.Bool("none", false, "grant no permission at all")
			return func(ctx context.Context, s *session, id, root string) error {
				req := &hdtpv1.SetContactPermissionsRequest{IdentityId: id, Root: root, Preset: *p.preset, Permissions: p.perms}
				if *none {
					req.Permissions = []string{}
				}
				if req.Preset == "" && req.Permissions == nil {
					return usageError("%s: give -preset, -permission or -none", s.op)
				}
				resp, err := s.hdtpContacts().SetContactPermissions(ctx, req)
				if err != nil {
					return err
				}
				return showContact(s, resp)
			}
		}),
		{group: "hdtp", name: "contact addresses", args: "ID", summary: "list contacts whose new address waits for the owner", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				return func(ctx context.Context, s *session, args []string) error {
					resp, err := s.hdtpContacts().ListPendingAddresses(ctx, &hdtpv1.ListPendingAddressesRequest{IdentityId: args[0]})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) {
						row(w, "ROOT", "NAME", "PINNED ENDPOINT", "NEW ENDPOINT", "PINNED FOR")
						for _, c := range resp.GetContacts() {
							a := c.GetPendingAddress()
							row(w, c.GetRoot(), c.GetDisplayName(), c.GetEndpoint(), a.GetEndpoint(), a.GetBorrowedFromRoot())
						}
					})
				}
			}},
		contactCommand("decide", "approve (-approve) or reject a contact's new address", func(fs *flag.FlagSet) func(context.Context, *session, string, string) error {
			approve := fs.Bool("approve", false, "re-pin the new endpoint and leaf (without it, the new address is rejected)")
			return func(ctx context.Context, s *session, id, root string) error {
				resp, err := s.hdtpContacts().DecidePendingAddress(ctx, &hdtpv1.DecidePendingAddressRequest{IdentityId: id, Root: root, Approve: *approve})
				if err != nil {
					return err
				}
				return showContact(s, resp)
			}
		}),
		{group: "hdtp", name: "contact request", args: "ID -card FILE", summary: "ask someone, from their card, to become a contact; prints the request_contact call to deliver",
			minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				cardFile := fs.String("card", "", "the `FILE` holding their card (vCard text, as received)")
				note := fs.String("note", "", "an optional `note` (at most 1024 bytes)")
				var resolved listFlag
				fs.Var(&resolved, "resolved", "an `IP` the card's endpoint host resolved to; repeat for each")
				out := fs.String("call-out", "", "write the call's JSON-RPC body to `FILE`")
				return func(ctx context.Context, s *session, args []string) error {
					if err := required(s.op, map[string]string{"-card": *cardFile}); err != nil {
						return err
					}
					text, err := readSmall(s, "card", *cardFile)
					if err != nil {
						return err
					}
					resp, err := s.hdtpContacts().RequestContact(ctx, &hdtpv1.RequestContactRequest{IdentityId: args[0], Card: text, Note: *note, ResolvedAddresses: resolved})
					if err != nil {
						return err
					}
					var cerr error
					err = s.emit(resp, func(w io.Writer) { contactFields(w, resp.GetContact()); cerr = callFields(s, w, resp.GetCall(), *out) })
					return firstErr(cerr, err)
				}
			}},
		{group: "hdtp", name: "contact redeem", args: "ID -url URL -landing FILE", summary: "redeem someone's invite from its landing JSON; prints the redeem_invite call to deliver",
			minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				u := fs.String("url", "", "the invite `URL`, https://<host>/i/<token>")
				landing := fs.String("landing", "", "the `FILE` holding the landing's JSON, fetched from the URL with Accept: application/hdtp-invite+json")
				var resolved listFlag
				fs.Var(&resolved, "resolved", "an `IP` the landing card's endpoint host resolved to; repeat for each")
				out := fs.String("call-out", "", "write the call's JSON-RPC body to `FILE`")
				return func(ctx context.Context, s *session, args []string) error {
					if err := required(s.op, map[string]string{"-url": *u, "-landing": *landing}); err != nil {
						return err
					}
					text, err := readSmall(s, "landing", *landing)
					if err != nil {
						return err
					}
					resp, err := s.hdtpContacts().RedeemInvite(ctx, &hdtpv1.RedeemInviteRequest{IdentityId: args[0], InviteUrl: *u, LandingJson: text,
						ResolvedAddresses: resolved})
					if err != nil {
						return err
					}
					var cerr error
					err = s.emit(resp, func(w io.Writer) { contactFields(w, resp.GetContact()); cerr = callFields(s, w, resp.GetCall(), *out) })
					return firstErr(cerr, err)
				}
			}},
		{group: "hdtp", name: "invite create", args: "ID", summary: "make an invite; prints its URL and token, once", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				ttl := fs.Int("ttl-days", 0, "how many `days` it stays redeemable (default 14, at most 90)")
				uses := fs.Int("max-uses", 0, "how many `redeems` it allows (default 1)")
				auto := fs.Bool("auto-accept", false, "make redeemers contacts at once, without approval")
				preset := fs.String("preset", "", "the `preset` redeemers get: basic (default), work, friend or family")
				label := fs.String("label", "", "a `label` shown on the requests it brings")
				return func(ctx context.Context, s *session, args []string) error {
					resp, err := s.hdtpInvites().CreateInvite(ctx, &hdtpv1.CreateInviteRequest{IdentityId: args[0], TtlDays: int32(*ttl), MaxUses: int32(*uses),
						AutoAccept: *auto, Preset: *preset, Label: *label})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) {
						row(w, "url", resp.GetUrl())
						row(w, "token", resp.GetToken())
						inviteFields(w, resp.GetInvite())
					})
				}
			}},
		{group: "hdtp", name: "invite list", args: "ID", summary: "list an identity's invites, newest first (never their tokens)", minArgs: 1, maxArgs: 1,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				return func(ctx context.Context, s *session, args []string) error {
					resp, err := s.hdtpInvites().ListInvites(ctx, &hdtpv1.ListInvitesRequest{IdentityId: args[0]})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) {
						row(w, "INVITE", "EXPIRES", "USES", "AUTO", "PRESET", "LABEL")
						for _, i := range resp.GetInvites() {
							row(w, i.GetInviteId(), when(i.GetExpireTime()), fmt.Sprintf("%d/%d", i.GetUses(), i.GetMaxUses()), yesNo(i.GetAutoAccept()),
								i.GetPreset(), i.GetLabel())
						}
					})
				}
			}},
		{group: "hdtp", name: "invite revoke", args: "ID INVITE", summary: "revoke an invite: its token is then unknown", minArgs: 2, maxArgs: 2,
			setup: func(fs *flag.FlagSet) func(context.Context, *session, []string) error {
				return func(ctx context.Context, s *session, args []string) error {
					resp, err := s.hdtpInvites().RevokeInvite(ctx, &hdtpv1.RevokeInviteRequest{IdentityId: args[0], InviteId: args[1]})
					if err != nil {
						return err
					}
					return s.emit(resp, func(w io.Writer) { fmt.Fprintf(w, "revoked invite %s\n", args[1]) })
				}
			}},
	}
}

func inviteFields(w io.Writer, i *hdtpv1.Invite) {
	row(w, "invite id", i.GetInviteId())
	row(w, "expires", when(i.GetExpireTime()))
	row(w, "uses", fmt.Sprintf("%d of %d", i.GetUses(), i.GetMaxUses()))
	row(w, "auto accept", yesNo(i.GetAutoAccept()))
	row(w, "preset", i.GetPreset())
	row(w, "label", i.GetLabel())
}

// readSmall reads a file of at most 64 KiB (a card or a landing).
func readSmall(s *session, flagName, file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", failure("%s: -%s: %v", s.op, flagName, err)
	}
	if len(b) > 64<<10 {
		return "", failure("%s: -%s: %s is larger than 64 KiB", s.op, flagName, file)
	}
	return string(b), nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
