package db

// ConversationStore is the storage of A2A conversations: contexts owned by
// (Brand, agent, sub) and their idempotent turns.
type ConversationStore interface{}
