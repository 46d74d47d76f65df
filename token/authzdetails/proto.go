package authzdetails

import pactv1 "pactd.dev/pactd/gen/pact/v1"

// Proto is one entry as the API returns it: type, canonical JSON, and the
// members sorted by name.
func Proto(e Entry) *pactv1.AuthorizationDetail {
	d := &pactv1.AuthorizationDetail{Type: e.Type, Json: e.Canonical()}
	for _, n := range e.Names() {
		v := e.Members[n]
		d.Members = append(d.Members, &pactv1.AuthorizationDetailMember{Name: n, Values: v.Values, Array: v.Array})
	}
	return d
}
