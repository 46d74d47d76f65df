package demo

import (
	"context"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// FuzzLogin: return_to only ever leads to this Brand's consent or
// connected-apps page on this site, and a session cookie is accepted only
// as the Login made it (for that user, that Brand, before it expires).
func FuzzLogin(f *testing.F) {
	for _, s := range []string{
		"", "/a2a/shop/oauth/consent?user_code=BCDF-GHJK", "http://127.0.0.1:3000/a2a/shop/oauth/consent?user_code=X",
		"//evil.example/a2a/shop/oauth/consent", "/a2a/shop/oauth/consent/../../../x", "/a2a/acme/oauth/connected",
		"https://evil.example/a2a/shop/oauth/connected#x", "/a2a/shop/oauth/consent%2f..", "javascript:alert(1)",
	} {
		f.Add(s, "alice|4102444800|sig")
	}
	l := NewLogin()
	good := l.sign("shop", "alice", "4102444800")
	f.Fuzz(func(t *testing.T, returnTo, cookie string) {
		if next, ok := returnPath(returnTo, "shop"); ok {
			u, err := url.Parse(next)
			if err != nil || u.Scheme != "" || u.Host != "" || u.Fragment != "" ||
				(u.Path != "/a2a/shop/oauth/consent" && u.Path != "/a2a/shop/oauth/connected") || strings.HasPrefix(next, "//") {
				t.Fatalf("return_to %q leads to %q", returnTo, next)
			}
		}
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Cookie", cookieName("shop")+"="+cookie)
		user := l.BrandUser(r, "shop")
		if user != "" && cookie != "alice|4102444800|"+good {
			t.Fatalf("cookie %q accepted as %q", cookie, user)
		}
	})
}

// TestLoginNamesTheBrand: with BrandName the sign-in page names the Brand
// by its display name (escaped); a Brand it does not know, or a path
// segment that cannot be a Brand id (never looked up), shows the id.
func TestLoginNamesTheBrand(t *testing.T) {
	l := NewLogin()
	var asked []string
	l.BrandName = func(_ context.Context, id string) string {
		asked = append(asked, id)
		if id == "shop" {
			return "Shop <Inc.>"
		}
		return ""
	}
	for _, c := range []struct{ path, want string }{
		{"/demo/shop/login", "<title>Sign in to Shop &lt;Inc.&gt;</title>"},
		{"/demo/other/login", "<title>Sign in to other</title>"},
		{"/demo/no%20such/login", "<title>Sign in to no such</title>"},
	} {
		w := httptest.NewRecorder()
		l.ServeHTTP(w, httptest.NewRequest("GET", c.path, nil))
		if w.Code != 200 || !strings.Contains(w.Body.String(), c.want) {
			t.Errorf("%s: %d lacks %q", c.path, w.Code, c.want)
		}
	}
	if !slices.Equal(asked, []string{"shop", "other"}) {
		t.Errorf("looked up %q", asked)
	}
}
