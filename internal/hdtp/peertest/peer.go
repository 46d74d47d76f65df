// Package peertest plays another person's agent in tests of a host: a
// root, a leaf and its card, sealing calls to an identity and opening the
// answers. It is imported by tests only.
package peertest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"pactd.dev/pactd/internal/hdtp/card"
	"pactd.dev/pactd/internal/hdtp/cert"
	"pactd.dev/pactd/internal/hdtp/envelope"
	"pactd.dev/pactd/internal/hdtp/wire"
)

// Peer is another person's agent, for tests of a host: a root in its
// wallet, a leaf key and the leaf the root issued for one endpoint, and
// its card. It seals calls to an identity and opens the answers, as a
// remote host of any make would.
type Peer struct {
	Gen     wire.Generation
	Name    string
	RootKey crypto.Signer
	RootDER []byte
	Root    *cert.Certificate
	Key     crypto.Signer
	Leaf    *cert.Certificate
	// Card is the peer's card (seal required), with its leaf.
	Card string
}

// NewPeer makes a peer with a fresh root and a leaf for endpoint valid
// from nb for a year; p256 picks P-256 keys over Ed25519.
func NewPeer(gen wire.Generation, name, endpoint string, nb time.Time, p256 bool) (*Peer, error) {
	rootKey := newKey(p256)
	rootDER, err := cert.NewRoot(rootKey, cert.RootTemplate{CommonName: name, NotBefore: nb.Add(-time.Hour)})
	if err != nil {
		return nil, err
	}
	root, err := cert.Parse(rootDER, cert.KindRoot, gen)
	if err != nil {
		return nil, err
	}
	p := &Peer{Gen: gen, Name: name, RootKey: rootKey, RootDER: rootDER, Root: root}
	return p.issue(endpoint, nb, p256)
}

// Renew is the same person with a fresh leaf key and leaf for endpoint
// (the same one for a renewal, another for a move), valid from nb.
func (p *Peer) Renew(endpoint string, nb time.Time) (*Peer, error) {
	q := *p
	return q.issue(endpoint, nb, cert.AlgOf(p.Key.Public()) == cert.P256)
}

func (p *Peer) issue(endpoint string, nb time.Time, p256 bool) (*Peer, error) {
	p.Key = newKey(p256)
	der, err := cert.IssueLeaf(p.Root, p.RootKey, cert.LeafTemplate{PublicKey: p.Key.Public(), CommonName: p.Name, Endpoint: endpoint,
		NotBefore: nb, NotAfter: nb.Add(365 * 24 * time.Hour)})
	if err != nil {
		return nil, err
	}
	if p.Leaf, err = cert.Parse(der, cert.KindLeaf, p.Gen); err != nil {
		return nil, err
	}
	p.Card, err = card.Write(p.Gen, p.Name, der, card.SealRequired)
	return p, err
}

func newKey(p256 bool) crypto.Signer {
	if p256 {
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		return k
	}
	_, k, _ := ed25519.GenerateKey(rand.Reader)
	return k
}

// Chain is the peer's chain [leaf, root].
func (p *Peer) Chain() [][]byte { return [][]byte{p.Leaf.Raw, p.RootDER} }

// RootFingerprint is the peer's name for its contacts.
func (p *Peer) RootFingerprint() string { return p.Root.Fingerprint() }

// Call is a sealed call ready to send.
type Call struct {
	// Body is the JSON-RPC request: a tools/call of sealed_call.
	Body []byte
	// MsgID is the envelope's msg_id.
	MsgID string
	// To is the leaf it was sealed to.
	To *cert.Certificate
}

// Seal seals a tools/call of tool with args (a JSON object) to the
// recipient leaf, in the full form or (small) the small form; rpcID is
// the JSON-RPC id.
func (p *Peer) Seal(to *cert.Certificate, rpcID int, msgID string, now time.Time, tool string, args string, small bool) (*Call, error) {
	params := []byte(`{"name":` + quote(tool) + `,"arguments":` + args + `}`)
	return p.seal(to, rpcID, msgID, now, "tools/call", params, small)
}

// SealList seals a tools/list.
func (p *Peer) SealList(to *cert.Certificate, rpcID int, msgID string, now time.Time, small bool) (*Call, error) {
	return p.seal(to, rpcID, msgID, now, "tools/list", []byte(`{}`), small)
}

func (p *Peer) seal(to *cert.Certificate, rpcID int, msgID string, now time.Time, method string, params []byte, small bool) (*Call, error) {
	from := envelope.Sender{Chain: p.Chain()}
	if small {
		k := p.Leaf.KeyID
		from = envelope.Sender{Leaf: &k}
	}
	pt, err := envelope.RequestPlaintext(method, params, from)
	if err != nil {
		return nil, err
	}
	env, err := envelope.Seal(envelope.SealOptions{Generation: p.Gen, Recipient: to, Sender: p.Key, MsgID: msgID, Now: now, Plaintext: pt})
	if err != nil {
		return nil, err
	}
	return &Call{Body: SealedCallBody(rpcID, env.JSON()), MsgID: msgID, To: to}, nil
}

// SealedCallBody is a JSON-RPC tools/call of sealed_call with the
// envelope's members as its arguments.
func SealedCallBody(rpcID int, envJSON []byte) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(rpcID) + `,"method":"tools/call","params":{"name":"sealed_call","arguments":` +
		string(envJSON) + `}}`)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// ToolResult reads a JSON-RPC response of a tools/call: its
// CallToolResult's isError and the text of its one item.
func ToolResult(body []byte) (isError bool, text []byte, err error) {
	var r struct {
		JSONRPC string `json:"jsonrpc"`
		Result  *struct {
			IsError bool `json:"isError"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return false, nil, err
	}
	if r.JSONRPC != "2.0" || r.Result == nil || len(r.Result.Content) != 1 || r.Result.Content[0].Type != "text" {
		return false, nil, errors.New("not one CallToolResult with one text item")
	}
	return r.Result.IsError, []byte(r.Result.Content[0].Text), nil
}

// Open opens a sealed answer to a call: the CallToolResult's text is a
// result envelope sealed to the peer's leaf; responder is the identity's
// leaf the peer knows, dialed its endpoint.
func (p *Peer) Open(body []byte, c *Call, responder *cert.Certificate, dialed string, now time.Time) (*envelope.Result, error) {
	isError, text, err := ToolResult(body)
	if err != nil {
		return nil, err
	}
	if isError {
		return nil, errors.New("a plaintext refusal: " + string(text))
	}
	key, err := envelope.RecipientPrivateKey(p.Key)
	if err != nil {
		return nil, err
	}
	root := responder.AuthorityKeyID
	return envelope.OpenResult(text, envelope.ResultOptions{Generation: p.Gen, Now: now, Caller: &envelope.Recipient{Leaf: p.Leaf, Key: key},
		MsgID: c.MsgID, PinnedLeaf: responder, ExpectedRoot: &root, Dialed: dialed})
}
