package db

// KeyStore is the storage of the Provider's signing keys, their private
// halves encrypted with the key-encryption key.
type KeyStore interface{}
