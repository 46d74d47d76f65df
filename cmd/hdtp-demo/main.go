// Command hdtp-demo shows two people's agents talking over HDTP 1.0, with
// one command:
//
//	go run ./cmd/hdtp-demo
//
// It starts pactd (embedded SQLite in a fresh temporary directory), makes
// two identities at pactd, you (https://agent.you.example/mcp) and Maya
// (https://agent.maya.example/mcp), each with a root from pactd's
// development wallet and its leaf installed, all with the pactd CLI; and
// starts a host for each (frontends/hdtphost, the Go MCP SDK) behind TLS on
// loopback, Maya's running her calendar. Then the walk: you import Maya's
// card and request contact (pactd hdtp contact request; your host delivers
// the sealed request_contact), Maya approves from the CLI (pactd hdtp
// contact approve; her host delivers the sealed contact_accepted), and
// your agent calls check_availability on Maya's agent and gets three free
// slots sealed back. Every CLI command is printed before it runs. The
// names route to loopback and a demo authority signs the hosts'
// certificate: a network set up on purpose, which is why the address
// guard judges the names alone.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"pactd.dev/pactd/frontends/hdtpdemo"
	"pactd.dev/pactd/frontends/hdtphost"
	hdtpv1 "pactd.dev/pactd/gen/hdtp/v1"
	"pactd.dev/pactd/server"
	"pactd.dev/pactd/server/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "hdtp-demo:", err)
		stop()
		os.Exit(1)
	}
}

// The walk's question and Maya's calendar: one busy hour between 09:00
// and 13:00, so three one-hour slots are free.
const (
	availabilityArgs = `{"window":{"from":"2026-12-08T09:00:00+01:00","to":"2026-12-08T13:00:00+01:00","tz":"Europe/Berlin"},"duration_min":60}`
	busyStart        = "2026-12-08T10:00:00+01:00"
	busyEnd          = "2026-12-08T11:00:00+01:00"
)

// person is one side of the walk.
type person struct {
	name, hostname, endpoint, id, root string
	host                               *hdtphost.Host
}

func run(ctx context.Context, out io.Writer) error {
	dir, err := os.MkdirTemp("", "hdtp-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintln(out, "building pactd (go build ./cmd/pactd) for its CLI ...")
	bin := filepath.Join(dir, "bin", "pactd")
	if b, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "pactd.dev/pactd/cmd/pactd").CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/pactd: %v\n%s", err, b)
	}

	// pactd, in this process, on the embedded store.
	adminToken, feToken := rand.Text(), rand.Text()
	cfg, err := config.Load(nil, []string{"PACT_ADMIN_TOKEN=" + adminToken, "PACT_FRONTEND_TOKEN=" + feToken,
		"PACT_DATA_DIR=" + filepath.Join(dir, "pactd"), "PACT_LISTEN=127.0.0.1:0", "PACT_GRPC_LISTEN=off"}, io.Discard)
	if err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(dir, "pactd.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	pLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv, err := server.Build(ctx, cfg, server.Deps{Logger: slog.New(slog.NewJSONHandler(logFile, nil)), Listeners: server.Listeners{API: pLn}})
	if err != nil {
		return err
	}
	pactdURL := "http://" + pLn.Addr().String()
	sctx, stopPactd := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan error, 1)
	go func() { served <- srv.Run(sctx) }()
	defer func() { stopPactd(); <-served }()
	cli := func(args ...string) (string, error) {
		fmt.Fprintf(out, "  $ pactd %s\n", strings.Join(quoteAll(args), " "))
		c := exec.CommandContext(ctx, bin, args...)
		c.Env = append(os.Environ(), "PACT_ADDR="+pactdURL, "PACT_ADMIN_TOKEN="+adminToken)
		b, err := c.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("pactd %s: %v\n%s", args[0], err, b)
		}
		return string(b), nil
	}
	fmt.Fprintf(out, "pactd is running at %s (SQLite in %s)\n", pactdURL, dir)

	// The network: both names route to loopback listeners whose TLS
	// certificate a demo authority signed.
	ca, certificate, err := demoTLS("agent.you.example", "agent.maya.example")
	if err != nil {
		return err
	}
	routes := map[string]string{}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		to, ok := routes[addr]
		if !ok {
			return nil, fmt.Errorf("no route to %s", addr)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, to)
	}

	you := &person{name: "You", hostname: "agent.you.example"}
	maya := &person{name: "Maya Lin", hostname: "agent.maya.example"}
	for _, p := range []*person{you, maya} {
		p.endpoint = "https://" + p.hostname + "/mcp"
		fmt.Fprintf(out, "\n== %s: a root in the development wallet, an identity at %s, its leaf installed\n", p.name, p.endpoint)
		wallet := filepath.Join(dir, "wallet-"+p.hostname)
		if _, err := cli("hdtp", "wallet-init", wallet, "-name", p.name); err != nil {
			return err
		}
		req := filepath.Join(dir, p.hostname+".request.json")
		created, err := cli("hdtp", "create", p.endpoint, "-name", p.name, "-request-out", req, "-o", "json")
		if err != nil {
			return err
		}
		var c struct{ Identity struct{ IdentityID string } }
		if err := json.Unmarshal([]byte(created), &c); err != nil || c.Identity.IdentityID == "" {
			return fmt.Errorf("pactd hdtp create printed %q", created)
		}
		p.id = c.Identity.IdentityID
		answer, err := cli("hdtp", "wallet-sign", wallet, "-request", req)
		if err != nil {
			return err
		}
		installed, err := cli("hdtp", "install", p.id, "-answer", strings.TrimSpace(answer), "-o", "json")
		if err != nil {
			return err
		}
		var inst struct {
			Identity struct{ RootFingerprint string }
		}
		if err := json.Unmarshal([]byte(installed), &inst); err != nil || inst.Identity.RootFingerprint == "" {
			return fmt.Errorf("pactd hdtp install printed %q", installed)
		}
		p.root = inst.Identity.RootFingerprint
		fmt.Fprintf(out, "  %s is %s, root %s\n", p.name, p.id, p.root)

		cals := hdtpdemo.Calendars{}
		if p == maya {
			cals[p.endpoint] = []hdtpdemo.Interval{{Start: busyStart, End: busyEnd}}
		}
		if p.host, err = hdtphost.New(hdtphost.Config{PactdURL: pactdURL, Token: feToken, RootCAs: ca, Dial: dial,
			Tools: []hdtphost.Tool{hdtpdemo.AvailabilityTool(cals)}}); err != nil {
			return err
		}
		if err := p.host.DeclareTools(ctx, p.id); err != nil {
			return fmt.Errorf("declare the tools: %w", err)
		}
		ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{certificate}})
		if err != nil {
			return err
		}
		mux := http.NewServeMux()
		mux.Handle("/i/", p.host.InviteHandler())
		mux.Handle("/", p.host)
		hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = hs.Serve(ln) }()
		defer hs.Close()
		routes[p.hostname+":443"] = ln.Addr().String()
		fmt.Fprintf(out, "  %s's host (frontends/hdtphost on the Go MCP SDK) serves %s at %s\n", p.name, p.endpoint, ln.Addr())
	}

	fmt.Fprintln(out, "\n== You import Maya's card and request contact")
	printed, err := cli("hdtp", "card", maya.id, "-o", "json")
	if err != nil {
		return err
	}
	var cardMsg struct{ Card *string }
	if err := json.Unmarshal([]byte(printed), &cardMsg); err != nil || cardMsg.Card == nil {
		return fmt.Errorf("pactd hdtp card printed %q", printed)
	}
	card := *cardMsg.Card
	fmt.Fprintf(out, "  Maya's card: %d bytes of vCard, X-HDTP-SEAL:required\n", len(card))
	cardFile := filepath.Join(dir, "maya.vcf")
	if err := os.WriteFile(cardFile, []byte(card), 0o600); err != nil {
		return err
	}
	requested, err := cli("hdtp", "contact", "request", you.id, "-card", cardFile, "-note", "Lunch next week?", "-o", "json")
	if err != nil {
		return err
	}
	res, err := deliverPrinted(ctx, you.host, requested)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  your host delivered request_contact; Maya's agent answered %s (sealed: %v)\n", res.JSON, res.Sealed)

	fmt.Fprintln(out, "\n== Maya approves from the CLI")
	waiting, err := cli("hdtp", "contact", "list", maya.id)
	if err != nil {
		return err
	}
	fmt.Fprint(out, indent(waiting))
	approved, err := cli("hdtp", "contact", "approve", maya.id, you.root, "-preset", "work", "-o", "json")
	if err != nil {
		return err
	}
	if res, err = deliverPrinted(ctx, maya.host, approved); err != nil {
		return err
	}
	fmt.Fprintf(out, "  Maya's host delivered contact_accepted; your agent answered %s (sealed: %v)\n", res.JSON, res.Sealed)

	fmt.Fprintln(out, "\n== Your agent asks Maya's agent: check_availability")
	fmt.Fprintf(out, "  arguments %s\n", availabilityArgs)
	res, err = you.host.Call(ctx, you.id, maya.root, "check_availability", json.RawMessage(availabilityArgs))
	if err != nil {
		return err
	}
	if res.Refusal != nil {
		return fmt.Errorf("refused by Maya's agent: %v", res.Refusal)
	}
	var got struct{ Slots []hdtpdemo.Slot }
	if err := json.Unmarshal(res.JSON, &got); err != nil {
		return err
	}
	fmt.Fprintf(out, "  %d free slots, sealed by Maya's host and opened by pactd for you (sealed: %v):\n", len(got.Slots), res.Sealed)
	for _, s := range got.Slots {
		fmt.Fprintf(out, "    %s – %s (%s)\n", s.Start, s.End, s.TZ)
	}
	if len(got.Slots) != 3 || !res.Sealed {
		return errors.New("the walk should end with three free slots, sealed")
	}
	fmt.Fprintln(out, "\ndone: two people's agents talked through pactd")
	return nil
}

// deliverPrinted delivers, with the host, the call a CLI command printed
// as JSON ({"contact":…,"call":…}); a refusal ends the walk.
func deliverPrinted(ctx context.Context, host *hdtphost.Host, printed string) (*hdtphost.Result, error) {
	var msg struct {
		Call json.RawMessage `json:"call"`
	}
	var call hdtpv1.OutboundCall
	if err := json.Unmarshal([]byte(printed), &msg); err != nil || protojson.Unmarshal(msg.Call, &call) != nil {
		return nil, fmt.Errorf("the CLI printed no call to deliver: %q", printed)
	}
	res, err := host.Deliver(ctx, &call)
	if err != nil {
		return nil, err
	}
	if res.Refusal != nil {
		return nil, fmt.Errorf("refused: %v", res.Refusal)
	}
	return res, nil
}

// indent indents a command's output under its command line.
func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
}

// demoTLS makes a demo authority and a certificate for the names it signs.
func demoTLS(names ...string) (*x509.CertPool, tls.Certificate, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hdtp-demo authority"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return pool, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// quoteAll quotes the arguments a shell would need quoted, for printing,
// and shortens a long one (a wallet's answer) to its start.
func quoteAll(args []string) []string {
	q := make([]string, len(args))
	for i, a := range args {
		if len(a) > 72 {
			a = a[:24] + "…"
		}
		if a == "" || strings.ContainsAny(a, " \"'$&;|<>?*") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q[i] = a
	}
	return q
}
