package verification

import (
	"context"

	"pactd.dev/pactd/db"
	"pactd.dev/pactd/token/pajwt"
)

// BrandStore is the storage the service reads Brands from.
type BrandStore interface {
	GetBrand(ctx context.Context, id string) (db.Brand, error)
}

// PAVerifier checks the PA JWT of an Authorization header value; a refusal
// is a *pajwt.Error, anything else an infrastructure fault.
type PAVerifier interface {
	VerifyPA(ctx context.Context, authorization string) (pajwt.Result, error)
}

// DelegationChecker checks an X-A2A-User-Delegation header value for a
// request to brand by the PA whose issuer is clientID. ok is false when the
// token must be refused (401 invalid_token); err is an infrastructure fault.
type DelegationChecker interface {
	CheckDelegation(ctx context.Context, brand db.Brand, clientID, header string) (info Delegation, ok bool, err error)
}
