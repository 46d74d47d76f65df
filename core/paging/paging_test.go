package paging

import (
	"testing"

	"connectrpc.com/connect"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/rpcerr"
)

func TestParse(t *testing.T) {
	p, err := Parse(nil)
	if err != nil || p.Size != DefaultSize || p.AfterID != "" {
		t.Fatalf("Parse(nil) = %+v, %v", p, err)
	}
	tok := Next(2, 2, "agt_2")
	p, err = Parse(&pactv1.PageRequest{PageSize: 2, PageToken: tok})
	if err != nil || p.Size != 2 || p.AfterID != "agt_2" {
		t.Fatalf("Parse(next) = %+v, %v", p, err)
	}
	if Next(1, 2, "x") != "" {
		t.Fatal("a short page must have no next token")
	}
	for name, req := range map[string]*pactv1.PageRequest{
		"fail/negative":   {PageSize: -1},
		"fail/too-large":  {PageSize: MaxSize + 1},
		"fail/garbage":    {PageToken: "nope"},
		"fail/bad-base64": {PageToken: "v1.***"},
		"fail/empty":      {PageToken: "v1."},
	} {
		_, err := Parse(req)
		if connect.CodeOf(err) != connect.CodeInvalidArgument || len(rpcerr.FieldViolations(err)) != 1 {
			t.Errorf("%s: err = %v, want InvalidArgument with one field violation", name, err)
		}
	}
}
