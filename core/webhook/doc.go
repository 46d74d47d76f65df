// Package webhook delivers the audit trail to the operator's HTTPS
// destinations: the dispatcher every replica runs over the store's outbox.
//
// # Outbox
//
// The store queues one delivery per (destination, audit event) in the
// transaction that records the event (db.WebhookStore). Each replica's
// dispatcher polls for due deliveries and leases a batch to itself: a
// leased delivery is invisible to every other claim until its lease ends,
// so two replicas never send it at the same time, and the lease of a
// replica that crashed ends by itself (LeaseFor after the claim).
//
// # Attempts
//
// An attempt is one POST of the event as JSON, signed as the Standard
// Webhooks specification says (package stdwebhook): webhook-id is the same
// on every attempt of the delivery, so a receiver de-duplicates on it. A 2xx
// answer delivers it; anything else (another status, a redirect, a refused
// or timed-out connection, an address the dial guard refuses) schedules the
// next attempt after an exponential backoff with jitter, until the attempt
// bound or the age bound is reached and the delivery is dead: kept and
// shown (WebhookService, pactd webhook), retried only by an operator.
//
// Delivery is at least once: a replica that sent a delivery and died (or
// lost its lease) before recording the answer sends it again. Deliveries of
// one destination are not ordered; receivers order by the event's id.
//
// # Secret rotation
//
// A destination rotated with an overlap keeps its previous sealed secret
// until the window ends (db.WebhookDestination.PreviousUntil). Until then
// each attempt's webhook-signature lists two signatures, under the current
// secret first and the previous one second, as the specification's
// zero-downtime rotation does: a receiver accepts when either verifies, so
// one still configured with the old secret keeps accepting while its
// operator installs the new one. From the window's end on, attempts carry
// the current secret's signature alone.
//
// # Address rules
//
// Destination URLs follow urlrule (https, public hosts, http only to
// loopback under PACT_DEV, hosts the operator allows), and the dispatcher's
// dialer checks every address it connects to with jose.CheckAddress, so a
// name that resolves somewhere private later still fails. Redirects are not
// followed and no proxy from the environment is used.
package webhook
