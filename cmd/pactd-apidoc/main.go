// Command pactd-apidoc writes the API reference, docs/api.md, from the
// documented descriptors pactd serves by reflection (internal/apidesc: the
// .proto comments) and the roles core/auth admits to each procedure. The
// page is output, never edited: edit the .proto (and rebuild pact.binpb),
// then
//
//	go run ./cmd/pactd-apidoc -o docs/api.md
//
// scripts/test.sh runs it and fails when the committed page differs.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"pactd.dev/pactd/core/auth"
	"pactd.dev/pactd/db"
	"pactd.dev/pactd/internal/apidesc"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "pactd-apidoc:", err)
		os.Exit(1)
	}
}

// run writes the reference to -o, or to stdout without it.
func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("pactd-apidoc", flag.ContinueOnError)
	out := fs.String("o", "", "write the page to `FILE` (default: standard output)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	page, err := reference()
	if err != nil {
		return err
	}
	if *out == "" {
		_, err = stdout.Write(page)
		return err
	}
	return os.WriteFile(*out, page, 0o644)
}

// reference renders the page from the embedded descriptors.
func reference() ([]byte, error) {
	files, err := apidesc.Files()
	if err != nil {
		return nil, err
	}
	return render(files, roles)
}

// roles names the roles whose credentials may call a procedure
// ("/pkg.Service/Method"), as the authentication interceptor decides.
func roles(procedure string) string {
	if auth.Allowed(db.RoleFrontend, procedure) {
		return "admin, frontend"
	}
	return "admin"
}
