package main

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"connectrpc.com/connect"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/gen/pact/v1/pactv1connect"
	"pactd.dev/pactd/server"
	"pactd.dev/pactd/server/config"
)

// brandID is the demo Brand.
const brandID = "acme"

// demoBrand is the Brand the demo registers. Its scopes are the ones the
// demo agent (frontends/demo) checks; a test holds the two equal.
func demoBrand(frontendURL string) *pactv1.CreateBrandRequest {
	return &pactv1.CreateBrandRequest{
		BrandId: brandID, DisplayName: "ACME Coffee",
		Description: "ACME Coffee support: questions, your orders, cancellations.",
		Skills: []*pactv1.Skill{
			{Id: "orders", Name: "Your orders", Description: "Lists your orders and their status (needs orders:read).",
				Tags: []string{"orders"}, Examples: []string{"show my orders"}},
			{Id: "cancel", Name: "Cancel an order", Description: "Cancels an order that has not shipped (needs orders:cancel).",
				Tags: []string{"orders", "cancel"}, Examples: []string{"cancel order 1002"}},
			{Id: "help", Name: "Help", Description: "Says what the agent can do.", Tags: []string{"help"}, Examples: []string{"hello"}},
		},
		Delegation: &pactv1.DelegationSettings{
			Enabled: true,
			Scopes: []*pactv1.Scope{
				{Id: "orders:read", Description: "See your orders and their delivery status"},
				{Id: "orders:cancel", Description: "Cancel your orders that have not shipped yet"},
				{Id: "profile:read", Description: "See your name and email address"},
			},
			LoginUrl:  frontendURL + "/demo/" + brandID,
			LoginMode: pactv1.BrandLoginMode_BRAND_LOGIN_MODE_TRUSTED_FRONTEND,
			// Resource-bound delegation (PACT §5.7): cancelling exact orders.
			AuthorizationDetailsTypes: []*pactv1.AuthorizationDetailsType{{
				Type: "https://acme.example/authorization/order-cancel/v1", Description: "Cancel one order", Scope: "orders:cancel",
				Combination:     pactv1.AuthorizationDetailsCombination_AUTHORIZATION_DETAILS_COMBINATION_UNION,
				ConsentTemplate: "Only order {order_id}: cancel it", // the Brand's words on the consent page
				Fields: []*pactv1.AuthorizationDetailsField{
					{Name: "order_id", Kind: pactv1.AuthorizationDetailsFieldKind_AUTHORIZATION_DETAILS_FIELD_KIND_STRING, Required: true,
						Label: "order", Pattern: `^[0-9]{4}$`},
					{Name: "actions", Kind: pactv1.AuthorizationDetailsFieldKind_AUTHORIZATION_DETAILS_FIELD_KIND_ENUM_ARRAY, Required: true,
						Label: "allowed", Values: []string{"cancel"}},
				},
			}},
		},
	}
}

// demoHelp is how to run the demo, for hints.
const demoHelp = "go run ./cmd/pact-demo"

// frontendStarter runs the frontend on ln against pactd; stop ends it.
type frontendStarter func(ctx context.Context, ln net.Listener, pactdURL, token, dir string, stderr io.Writer) (stop func(), err error)

// serve runs the demo until ctx ends, then deletes its directory.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer, start frontendStarter) error {
	fs := flag.NewFlagSet("pact-demo", flag.ContinueOnError)
	usage := func() {
		fmt.Fprintf(stderr, "usage: pact-demo [flags]    run the demo Provider until Ctrl-C\n       %s\n\nflags of pact-demo:\n", strings.ReplaceAll(strings.TrimPrefix(paUsage, "usage: "), "\n", "\n       "))
		fs.SetOutput(stderr)
		fs.PrintDefaults()
	}
	dir := fs.String("dir", "", "the demo's directory, deleted at the start and the end (default: a fresh temporary directory)")
	listen := fs.String("listen", "127.0.0.1:3000", "host:port of the frontend (the Provider's public URL)")
	kind := fs.String("frontend", "go", "which frontend serves the demo: "+frontendKinds+", or the path of a program that takes cmd/pact-a2a's flags")
	if err := parseFlags(fs, args, usage, demoHelp); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return badUsage(demoHelp, "unexpected argument %q (the PA commands start with \"pa\")", fs.Arg(0))
	}
	feName := "cmd/pact-a2a"
	if *kind != "go" {
		fe, err := namedFrontend(*kind)
		if err != nil {
			return err
		}
		feName, start = fe.name, fe.start
	}
	fresh := *dir == ""
	if err := demoDir(dir); err != nil {
		return err
	}
	defer os.RemoveAll(*dir)

	feLn, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("frontend: %w (pick another address with -listen)", err)
	}
	defer feLn.Close()
	feURL := "http://" + feLn.Addr().String()

	// The PA: an ES256 key published at {issuer}/jwks.json.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	const kid = "demo-pa-1"
	paLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	issuer := "http://" + paLn.Addr().String()
	jwks := &http.Server{Handler: jwksHandler(&key.PublicKey, kid), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = jwks.Serve(paLn) }()
	defer jwks.Close()

	// pactd, in this process, on the embedded store, on one free port: the
	// frontend and the docs' grpcurl walk both use the main port, so the
	// native gRPC port stays off (its default 127.0.0.1:7071 would clash
	// with a pactd already running here).
	// Credentials: PACT_ADMIN_TOKEN and PACT_FRONTEND_TOKEN when set (to
	// call this pactd with grpcurl or buf curl too), else random.
	adminToken, feToken := cmp.Or(os.Getenv("PACT_ADMIN_TOKEN"), rand.Text()), cmp.Or(os.Getenv("PACT_FRONTEND_TOKEN"), rand.Text())
	logFile, err := os.Create(filepath.Join(*dir, "pactd.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	cfg, err := config.Load(nil, []string{
		"PACT_ADMIN_TOKEN=" + adminToken, "PACT_FRONTEND_TOKEN=" + feToken, "PACT_DATA_DIR=" + filepath.Join(*dir, "pactd"),
		"PACT_PUBLIC_URL=" + feURL, "PACT_DEV=true", "PACT_LISTEN=127.0.0.1:0", "PACT_GRPC_LISTEN=off",
	}, io.Discard)
	if err != nil {
		return err
	}
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

	if err := register(ctx, pactdURL, adminToken, issuer, feURL); err != nil {
		return err
	}
	globex, err := startBrandLogin(feURL) // the second Brand's own login site
	if err != nil {
		return err
	}
	defer globex.close()
	if err := globex.register(ctx, pactdURL, adminToken, feURL); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "starting the frontend (%s -demo) ...\n", feName)
	stopFE, err := start(ctx, feLn, pactdURL, feToken, *dir, stderr)
	if err != nil {
		return err
	}
	defer stopFE()
	if err := waitReady(ctx, feURL+"/a2a/"+brandID+"/.well-known/agent-card.json"); err != nil {
		return fmt.Errorf("frontend: %w (its log: %s)", err, filepath.Join(*dir, "pact-a2a.log"))
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	st := demoState{Frontend: feURL, Brand: brandID, Audience: cfg.Audience, Issuer: issuer, KID: kid, Key: der, PA: paMemory{Subject: "pa-user-1"}}
	if err := st.save(*dir); err != nil {
		return err
	}
	if fresh {
		// The PA commands find this demo without -dir while it is the newest
		// one running; when it stops, the one started before it again.
		unregister, err := registerDemo(*dir)
		if err != nil {
			return err
		}
		defer unregister()
	}
	printBanner(stdout, *dir, pactdURL, feURL, issuer)
	printGlobex(stdout, feURL, globex)
	printExports(stdout, pLn.Addr().String(), issuer, adminToken, feToken)

	select {
	case <-ctx.Done():
		fmt.Fprintln(stdout, "\nstopping; deleting", *dir)
		return nil
	case err := <-served:
		served <- err // for the deferred wait
		return fmt.Errorf("pactd stopped: %w", err)
	}
}

// demoDir makes *dir a fresh temporary directory when it is empty, else
// empties the directory the user named.
func demoDir(dir *string) error {
	if *dir == "" {
		d, err := os.MkdirTemp("", "pact-demo-")
		*dir = d
		return err
	}
	if err := os.RemoveAll(*dir); err != nil {
		return err
	}
	return os.MkdirAll(*dir, 0o700)
}

// printExports prints the shell line that the admin, grpcurl and buf curl
// lines of docs/getting-started.md and docs/delegation.md start from:
// pactd's host:port (grpcurl takes no URL), its URL as PACT_ADDR (the
// address the pactd admin commands call, and the one the docs' blocks
// derive theirs from), the PA's issuer and the demo's credentials. Without PACT_ADDR those lines would call the default
// 127.0.0.1:7070 with the demo's credentials.
func printExports(w io.Writer, pactdAddr, issuer, adminToken, feToken string) {
	fmt.Fprintf(w, "To call this pactd with the pactd admin commands, grpcurl or buf curl (docs/getting-started.md, \"Call it\"), paste:\n\n"+
		"  export P=%s PACT_ADDR=http://%s ISS=%s PACT_ADMIN_TOKEN=%s PACT_FRONTEND_TOKEN=%s\n\n", pactdAddr, pactdAddr, issuer, adminToken, feToken)
}

// register onboards the PA and creates the demo Brand through the admin API.
func register(ctx context.Context, pactdURL, adminToken, issuer, feURL string) error {
	admin := connect.WithInterceptors(connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+adminToken)
			return next(ctx, req)
		}
	}))
	hc := &http.Client{Timeout: 10 * time.Second}
	if _, err := pactv1connect.NewAgentServiceClient(hc, pactdURL, admin).RegisterAgent(ctx, &pactv1.RegisterAgentRequest{
		Issuer: issuer, JwksUri: issuer + "/jwks.json", DisplayName: "Demo Personal Agent",
	}); err != nil {
		return fmt.Errorf("register the PA: %w", err)
	}
	if _, err := pactv1connect.NewBrandServiceClient(hc, pactdURL, admin).CreateBrand(ctx, demoBrand(feURL)); err != nil {
		return fmt.Errorf("create the Brand: %w", err)
	}
	return nil
}

// jwksHandler publishes the PA's public key.
func jwksHandler(pub *ecdsa.PublicKey, kid string) http.Handler {
	raw, _ := pub.Bytes() // uncompressed point: 0x04 || X || Y
	doc, _ := json.Marshal(map[string]any{"keys": []any{map[string]string{
		"kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "use": "sig",
		"x": base64.RawURLEncoding.EncodeToString(raw[1:33]), "y": base64.RawURLEncoding.EncodeToString(raw[33:]),
	}}})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /jwks.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
	})
	return mux
}

// startFrontend builds cmd/pact-a2a with the go command and runs it.
func startFrontend(ctx context.Context, ln net.Listener, pactdURL, token, dir string, stderr io.Writer) (func(), error) {
	return buildAndRun(ctx, "pactd.dev/pactd/cmd/pact-a2a", ln, pactdURL, token, dir, stderr)
}

// buildAndRun builds a Go frontend program with the go command and runs it.
func buildAndRun(ctx context.Context, pkg string, ln net.Listener, pactdURL, token, dir string, stderr io.Writer) (func(), error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("the go command is not on PATH (it builds %s); pass -frontend with a built program", pkg)
	}
	bin := filepath.Join(dir, filepath.Base(pkg))
	build := exec.CommandContext(ctx, goTool, "build", "-o", bin, pkg)
	build.Stdout, build.Stderr = stderr, stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("go build %s (run from the pactd checkout, or pass -frontend with a built program): %w", pkg, err)
	}
	return runFrontend(bin, ln, pactdURL, token, dir)
}

// fe is a frontend -frontend named: what the banner calls it, and how it starts.
type fe struct {
	name  string
	start frontendStarter
}

// frontendKinds names the frontends -frontend starts by name.
const frontendKinds = "go (cmd/pact-a2a), a2a-go (frontends/a2a-go-example), ts (frontends/node), " +
	"a2a-js (frontends/a2a-js-example), python (frontends/python)"

// namedFrontend is the frontend -frontend names: one of frontendKinds, or
// the path of a program that takes cmd/pact-a2a's flags (-listen, -pactd,
// -demo) and PACT_FRONTEND_TOKEN. The TypeScript and Python ones run from
// this checkout, so they must be built (TypeScript) or installed (Python)
// first; the error says how.
func namedFrontend(kind string) (fe, error) {
	script := func(name, path, prepare string) (fe, error) {
		if _, err := os.Stat(path); err != nil {
			return fe{}, fmt.Errorf("-frontend %s: %s is missing (run pact-demo from the pactd checkout)", kind, path)
		}
		if prepare != "" {
			if _, err := os.Stat(prepare); err != nil {
				return fe{}, fmt.Errorf("-frontend %s: %s is not built: cd frontends && npm ci && npm run build --workspaces", kind, name)
			}
		}
		return fe{name, func(_ context.Context, ln net.Listener, pactdURL, token, dir string, _ io.Writer) (func(), error) {
			return runFrontend(path, ln, pactdURL, token, dir)
		}}, nil
	}
	switch kind {
	case "a2a-go":
		return fe{"frontends/a2a-go-example", func(ctx context.Context, ln net.Listener, pactdURL, token, dir string, stderr io.Writer) (func(), error) {
			return buildAndRun(ctx, "pactd.dev/pactd/frontends/a2a-go-example", ln, pactdURL, token, dir, stderr)
		}}, nil
	case "ts":
		return script("frontends/node", filepath.Join("frontends", "node", "bin", "pact-a2a-node"),
			filepath.Join("frontends", "node", "dist", "src", "main.js"))
	case "a2a-js":
		return script("frontends/a2a-js-example", filepath.Join("frontends", "a2a-js-example", "bin", "pact-a2a-js-example"),
			filepath.Join("frontends", "a2a-js-example", "dist", "src", "main.js"))
	case "python":
		return script("frontends/python", filepath.Join("frontends", "python", "bin", "pact-a2a-python"), "")
	}
	if !strings.ContainsRune(kind, filepath.Separator) {
		return fe{}, fmt.Errorf("-frontend %q: want %s, or a program's path", kind, frontendKinds)
	}
	if _, err := os.Stat(kind); err != nil {
		return fe{}, fmt.Errorf("-frontend: %w", err)
	}
	return fe{kind, func(_ context.Context, ln net.Listener, pactdURL, token, dir string, _ io.Writer) (func(), error) {
		return runFrontend(kind, ln, pactdURL, token, dir)
	}}, nil
}

// runFrontend runs a pact-a2a binary on ln's address, logging to a file.
func runFrontend(bin string, ln net.Listener, pactdURL, token, dir string) (func(), error) {
	logFile, err := os.Create(filepath.Join(dir, "pact-a2a.log"))
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	_ = ln.Close() // the child listens on the address this process reserved
	cmd := exec.Command(bin, "-listen", addr, "-pactd", pactdURL, "-demo")
	cmd.Env = append(os.Environ(), "PACT_FRONTEND_TOKEN="+token)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited); logFile.Close() }()
	return func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}, nil
}

// waitReady polls url until it answers 200, for at most 20 seconds.
func waitReady(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer 200: %w", url, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func printBanner(w io.Writer, dir, pactdURL, feURL, issuer string) {
	pa := "go run ./cmd/pact-demo pa"
	if dir != defaultDir() {
		pa += " -dir " + dir
	}
	lines := []string{
		"",
		"PACT demo is running. Ctrl-C stops it and deletes " + dir + ".",
		"",
		"  pactd (trust and tokens)     " + pactdURL + "   log: " + filepath.Join(dir, "pactd.log"),
		"  frontend (A2A, OAuth, pages) " + feURL + "   log: " + filepath.Join(dir, "pact-a2a.log"),
		"  Brand acme, its Agent Card   " + feURL + "/a2a/acme/.well-known/agent-card.json",
		"  personal agent (PA) issuer   " + issuer,
		"",
		"In another terminal, be the PA:",
		"",
		"  " + pa + " send \"hello\"",
		"  " + pa + " send \"show my orders\"       # the agent asks for permission: a step-up task",
		"  " + pa + " connect orders:read orders:cancel",
		"        # open the printed link, sign in as alice, uncheck \"Cancel…\", check the code matches the one printed here, Allow",
		"  " + pa + " send \"show my orders\"       # your orders, with a signed receipt the PA verifies",
		"  " + pa + " send \"cancel order 1002\"    # step-up again: cancelling was not granted",
		"  " + pa + " connect -as alice orders:cancel   # (-as: the PA plays the User in the browser)",
		"  " + pa + " send \"cancel order 1002\"    # done, and the receipt names the action",
		"",
		"Connected apps (revoke): " + feURL + "/a2a/acme/oauth/connected",
		"Raw HTTP: curl -s " + feURL + "/a2a/acme/message:send -H \"Authorization: Bearer $(" + pa + " token)\" \\",
		"            -d '{\"message\":{\"messageId\":\"m-1\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"hello\"}]}}'",
		"",
	}
	fmt.Fprintln(w, strings.Join(lines, "\n"))
}
