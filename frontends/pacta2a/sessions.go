package pacta2a

import "net/http"

// Sessions tells pactd who the User is at a Brand in
// BRAND_LOGIN_MODE_TRUSTED_FRONTEND: the frontend vouches for the Brand
// user it names, and pactd renders that User's consent and connected
// pages. Package demo has a cookie sign-in. Brands in
// BRAND_LOGIN_MODE_SIGNED_ASSERTION need none.
type Sessions interface {
	// BrandUser returns the id at brandID of the User signed in on r, or "".
	BrandUser(r *http.Request, brandID string) string
	// LoginURL is where a User who is not signed in goes first; the sign-in
	// then returns to returnTo, a path (and query) on this frontend.
	LoginURL(brandID, returnTo string) string
}
