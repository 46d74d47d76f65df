package brand

import (
	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/rpcerr"
	"pactd.dev/pactd/token/authzdetails"
)

// The proto enums and the stored kinds and combinations (PACT §5.7).
var (
	kindFromProto = map[pactv1.AuthorizationDetailsFieldKind]authzdetails.Kind{
		pactv1.AuthorizationDetailsFieldKind_AUTHORIZATION_DETAILS_FIELD_KIND_STRING:     authzdetails.KindString,
		pactv1.AuthorizationDetailsFieldKind_AUTHORIZATION_DETAILS_FIELD_KIND_ENUM:       authzdetails.KindEnum,
		pactv1.AuthorizationDetailsFieldKind_AUTHORIZATION_DETAILS_FIELD_KIND_ENUM_ARRAY: authzdetails.KindEnumArray,
	}
	combinationFromProto = map[pactv1.AuthorizationDetailsCombination]authzdetails.Combination{
		pactv1.AuthorizationDetailsCombination_AUTHORIZATION_DETAILS_COMBINATION_UNSPECIFIED: authzdetails.CombineUnion,
		pactv1.AuthorizationDetailsCombination_AUTHORIZATION_DETAILS_COMBINATION_UNION:       authzdetails.CombineUnion,
		pactv1.AuthorizationDetailsCombination_AUTHORIZATION_DETAILS_COMBINATION_SINGLE:      authzdetails.CombineSingle,
	}
)

// checkDetailsTypes validates the authorization_details types of d
// against its own scopes; every problem is a violation under field.
func checkDetailsTypes(v *rpcerr.Violations, field string, d *pactv1.DelegationSettings) {
	in := d.GetAuthorizationDetailsTypes()
	if len(in) == 0 {
		return
	}
	scopes := make(map[string]bool, len(d.GetScopes()))
	for _, sc := range d.GetScopes() {
		scopes[sc.GetId()] = true
	}
	for _, p := range authzdetails.CheckTypes(detailsTypesFromProto(in), scopes) {
		v.Add(field+p.Field, "%s", p.Message)
	}
}

// detailsTypesFromProto converts declared types for storage; an
// unspecified combination is stored as union, an unknown kind or
// combination as "" (which CheckTypes refuses).
func detailsTypesFromProto(in []*pactv1.AuthorizationDetailsType) []authzdetails.Type {
	if len(in) == 0 {
		return nil
	}
	out := make([]authzdetails.Type, 0, len(in))
	for _, t := range in {
		ct := authzdetails.Type{
			Type: t.GetType(), Description: t.GetDescription(), Scope: t.GetScope(),
			Combination: combinationFromProto[t.GetCombination()], ConsentTemplate: t.GetConsentTemplate(),
		}
		if _, ok := combinationFromProto[t.GetCombination()]; !ok {
			ct.Combination = "invalid"
		}
		for _, f := range t.GetFields() {
			ct.Fields = append(ct.Fields, authzdetails.Field{
				Name: f.GetName(), Kind: kindFromProto[f.GetKind()], Required: f.GetRequired(), Label: f.GetLabel(),
				Pattern: f.GetPattern(), Values: f.GetValues(),
			})
		}
		out = append(out, ct)
	}
	return out
}

func detailsTypesToProto(in []authzdetails.Type) []*pactv1.AuthorizationDetailsType {
	out := make([]*pactv1.AuthorizationDetailsType, 0, len(in))
	for _, t := range in {
		pt := &pactv1.AuthorizationDetailsType{Type: t.Type, Description: t.Description, Scope: t.Scope, ConsentTemplate: t.ConsentTemplate}
		if t.Combination == authzdetails.CombineSingle {
			pt.Combination = pactv1.AuthorizationDetailsCombination_AUTHORIZATION_DETAILS_COMBINATION_SINGLE
		} else {
			pt.Combination = pactv1.AuthorizationDetailsCombination_AUTHORIZATION_DETAILS_COMBINATION_UNION
		}
		for _, f := range t.Fields {
			pf := &pactv1.AuthorizationDetailsField{Name: f.Name, Required: f.Required, Label: f.Label, Pattern: f.Pattern, Values: f.Values}
			for pk, k := range kindFromProto {
				if k == f.Kind {
					pf.Kind = pk
				}
			}
			pt.Fields = append(pt.Fields, pf)
		}
		out = append(out, pt)
	}
	return out
}
