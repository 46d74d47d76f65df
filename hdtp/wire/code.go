package wire

// Code is an error code of HDTP §12 (PACT §12 lists the same fifteen): the
// "code" member of a refusal, exactly as it travels.
type Code string

// The error codes.
const (
	// CodeUnknownContact: the call needs a contact or request the receiver
	// does not hold for the caller.
	CodeUnknownContact Code = "unknown_contact"
	// CodePendingApproval: a pending-tier caller outside its tier, a
	// repeated request_contact, a new address under "ask".
	CodePendingApproval Code = "pending_approval"
	// CodePermissionDenied: at the contact tier, a hidden or nonexistent
	// tool.
	CodePermissionDenied Code = "permission_denied"
	// CodeInviteInvalid: an invite token that is unknown, expired, revoked
	// or used up; one answer for all four.
	CodeInviteInvalid Code = "invite_invalid"
	// CodeBlockedOrUnknown: at the guest tier, any hidden or nonexistent
	// tool; one answer for every case.
	CodeBlockedOrUnknown Code = "blocked_or_unknown"
	// CodeTooLarge: a string or decoded data past its bound.
	CodeTooLarge Code = "too_large"
	// CodeRateLimited: a budget is spent; carries retry_after.
	CodeRateLimited Code = "rate_limited"
	// CodeUnavailable: a capability missing, a tool withheld, a cap hit.
	CodeUnavailable Code = "unavailable"
	// CodeBadRequest: a bad argument, or a card refused at intake.
	CodeBadRequest Code = "bad_request"
	// CodeSealRequired: an identified caller's plain substantive call to a
	// recipient whose seal policy is "required".
	CodeSealRequired Code = "seal_required"
	// CodeIdentityRequired: no usable identity proof where one is needed.
	CodeIdentityRequired Code = "identity_required"
	// CodeEnvelopeInvalid: an envelope that is malformed, misdirected,
	// mis-signed, expired or fingerprint-mismatched, or whose chain fails.
	CodeEnvelopeInvalid Code = "envelope_invalid"
	// CodeSealNotAccepted: a sealed call to a recipient whose seal policy
	// is "none".
	CodeSealNotAccepted Code = "seal_not_accepted"
	// CodeCertificateRenewed: an envelope sealed to a leaf key the
	// identity once held and holds no longer; carries the current chain.
	CodeCertificateRenewed Code = "certificate_renewed"
	// CodeChainRequired: a small-form envelope that could not be verified
	// against a leaf the receiver holds; carries nothing more.
	CodeChainRequired Code = "chain_required"
)
