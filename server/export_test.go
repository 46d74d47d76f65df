package server

// The intervals of the server's loops, for tests that move a test clock
// past them.
const (
	PurgeEvery     = purgeEvery
	HeartbeatEvery = heartbeatEvery
)
