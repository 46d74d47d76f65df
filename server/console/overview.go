package console

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"pactd.dev/pactd/core/provkeys"
	"pactd.dev/pactd/db"
	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

// replicaWindow is how recently a replica must have beaten to be listed:
// a few heartbeats (server.heartbeatEvery).
const replicaWindow = 2 * time.Minute

// maxReplicas bounds the overview's replica list.
const maxReplicas = 100

// overviewData is the overview: health, the replicas, the signing keys and
// the counts.
type overviewData struct {
	// StoreError is why the database did not answer; "" when it did.
	StoreError, Engine string
	// FeedFresh says whether this replica's change feed is within its
	// bound; Bound is that bound.
	FeedFresh bool
	Bound     time.Duration
	// Head is the feed's newest position (0 when empty or unknown).
	Head     int64
	Replicas []replicaRow
	Keys     []provkeys.KeyInfo
	// KeysError and CountsError say why those could not be read.
	KeysError, CountsError string
	Counts                 db.Counts
}

// replicaRow is one replica the overview lists.
type replicaRow struct {
	db.Replica
	// This marks the replica serving the page; Behind is how many changes
	// it has yet to apply.
	This   bool
	Behind int64
}

func (c *Console) overview(w http.ResponseWriter, r *http.Request, s session) {
	c.showOverview(w, r, s, http.StatusOK, "")
}

func (c *Console) showOverview(w http.ResponseWriter, r *http.Request, s session, status int, msg string) {
	ctx := s.ctx
	now := c.d.Now()
	d := overviewData{Engine: c.d.Store.Engine(), FeedFresh: c.d.Feed.Fresh(now), Bound: c.d.Feed.Bound()}
	if err := c.d.Store.Ping(ctx); err != nil {
		d.StoreError = "the database does not answer"
	}
	if head, err := c.d.Store.LatestChange(ctx); err == nil {
		d.Head = head.Pos
	} else if !errors.Is(err, db.ErrNotFound) {
		c.d.Logger.WarnContext(ctx, "console overview: feed head", slog.String("error", err.Error()))
	}
	reps, err := c.d.Store.ListReplicas(ctx, now.Add(-replicaWindow), maxReplicas)
	if err != nil {
		c.d.Logger.WarnContext(ctx, "console overview: replicas", slog.String("error", err.Error()))
	}
	for _, rep := range reps {
		d.Replicas = append(d.Replicas, replicaRow{Replica: rep, This: rep.ID == c.d.Replica, Behind: max(0, d.Head-rep.FeedPosition)})
	}
	if d.Keys, err = c.d.Keys.Keys(ctx); err != nil {
		d.KeysError = "the signing keys could not be read"
	}
	if d.Counts, err = c.d.Store.ConsoleCounts(ctx, now); err != nil {
		d.CountsError = "the counts could not be read"
	}
	c.render(w, r, status, "overview", view{Title: "Overview", CSRF: s.csrf, Error: msg, Data: d})
}

// rotateKey publishes a new signing key through TokenService.RotateSigningKey.
func (c *Console) rotateKey(w http.ResponseWriter, r *http.Request, s session) {
	if _, err := c.d.Tokens.RotateSigningKey(s.ctx, &pactv1.RotateSigningKeyRequest{}); err != nil {
		status, msg := reason(err)
		c.showOverview(w, r, s, status, msg)
		return
	}
	c.d.Logger.InfoContext(s.ctx, "console: signing key rotated")
	done(w, r, "/", "rotated")
}
