package db

// DelegationStore is the storage of PACT Delegated: Provider signing keys,
// device authorizations, grants and refresh tokens.
type DelegationStore interface{}
