package db

// DelegationStore is the storage of PACT Delegated:
// device authorizations, grants and refresh tokens.
type DelegationStore interface{}
