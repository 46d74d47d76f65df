package consent

import (
	"context"
	"unicode/utf8"

	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/services/delegation/base"
	"pactd.dev/pactd/services/delegation/codes"
	"pactd.dev/pactd/token/brandassert"
)

// The Brand login assertion verifier lives in package brandassert; this
// file configures it with the delegation rules (user codes, Brand user ids)
// and turns what it verified into the single-use record the store keeps.

// assertionRefusal is a refused assertion (see brandassert.Refusal).
type assertionRefusal = brandassert.Refusal

// keysFault is a failure to obtain a Brand's assertion keys.
type keysFault = brandassert.KeysFault

// refuse builds a refusal with the code its reason implies.
func refuse(reason pactv1.BrandAssertionRefusal, msg string) *assertionRefusal {
	return brandassert.Refuse(reason, msg)
}

// Shorthands for the refusal reasons the RPCs give themselves (the
// verifier gives the others).
const (
	reasonReplayed   = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_REPLAYED
	reasonNotPending = pactv1.BrandAssertionRefusal_BRAND_ASSERTION_REFUSAL_NOT_PENDING
)

// brandAssertion is a verified Brand login assertion.
type brandAssertion struct {
	// subject is sub, the User's id at the Brand.
	subject string
	// jti is the assertion's id, recorded once per Brand.
	jti string
	// kid is the key that verified it.
	kid string
	// email is the optional email claim ("" when absent).
	email string
	// userCode is the user_code claim, normalized.
	userCode string
	// use is the single-use record to store with the decision.
	use db.BrandAssertionUse
}

// assertionPurpose is what an assertion is for: consent (aud the consent
// URL, a user_code claim) or the connected page (aud the connected URL,
// no user_code claim).
type assertionPurpose struct {
	aud string
	// userCode is the request's user code for consent ("" when the claim
	// names the authorization).
	userCode string
	// connected is set for the connected page.
	connected bool
}

// verifyAssertionFor verifies a Brand login assertion for purpose p at
// Brand b, in the order BrandAssertionRefusal documents. A refusal is an
// *assertionRefusal, a keys fault a *keysFault; any other error is the
// caller's context ending. The assertion itself never appears in an error.
func (s *Service) verifyAssertionFor(ctx context.Context, b db.Brand, tok string, p assertionPurpose) (brandAssertion, error) {
	// A nil BrandKeys is a nil KeySource: a keys fault, as before.
	v := brandassert.Verifier{Keys: s.env.D.BrandKeys, ValidSubject: validBrandUser, NormalizeUserCode: codes.NormalizeUserCode}
	a, err := v.Verify(ctx,
		brandassert.Brand{ID: b.ID, Issuer: b.Delegation.AssertionIssuer, JWKSURI: b.Delegation.AssertionJWKSURI},
		tok, brandassert.Purpose{Aud: p.aud, UserCode: p.userCode, Connected: p.connected}, s.env.Now())
	if err != nil {
		return brandAssertion{}, err
	}
	return brandAssertion{
		subject: a.Subject, jti: a.JTI, kid: a.KID, email: a.Email, userCode: a.UserCode,
		use: db.BrandAssertionUse{BrandID: b.ID, JTI: a.JTI, ExpireTime: a.UseExpiry},
	}, nil
}

// validBrandUser reports whether u is a usable Brand user id: 1 to 256
// bytes of UTF-8 without control characters (the rule of base.CheckBrandUser).
func validBrandUser(u string) bool {
	return u != "" && len(u) <= base.MaxBrandUser && utf8.ValidString(u) && !hasControl(u)
}

// hasControl reports whether s holds an ASCII control character or DEL.
func hasControl(s string) bool { return brandassert.HasControl(s) }
