package election_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
)

// newClient is what an application on go-redis would do; the examples
// compile but do not run, for they need a server.
func newClient() election.Client {
	return goredisadapter.New(redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true}))
}

func ExampleNew() {
	host, _ := os.Hostname()
	e, err := election.New(newClient(), election.Config{
		Name:          "report-builder",
		NodeID:        host,
		TTL:           10 * time.Second,
		RenewInterval: 3 * time.Second, // at most TTL/2
	})
	if errors.Is(err, election.ErrRenewInterval) {
		log.Fatal("renew interval too close to the TTL: ", err)
	}
	if err != nil {
		log.Fatal(err)
	}
	_ = e
}

// The callback style: fn runs for as long as this node leads, and every
// write it makes carries the term's epoch.
func ExampleElector_Run() {
	e, err := election.New(newClient(), election.Config{Name: "report-builder"})
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	err = e.Run(ctx, func(ctx context.Context, term election.Term) error {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done(): // demoted or stopped: context.Cause says which
				return nil
			case <-tick.C:
			}
			err := term.Fencer.Set(ctx, "report:status", "running")
			if errors.Is(err, fence.ErrStale) {
				// A newer term has written: this one has already ended
				// (ReasonFencedOut). Stop; never retry the write.
				return nil
			}
			if err != nil {
				log.Printf("write: %v", err)
			}
		}
	})
	log.Print(err) // ctx ended
}

// The token-driven style: Run only holds leadership, and other goroutines
// act in the leader's name with a snapshot of the term.
func ExampleElector_Term() {
	e, err := election.New(newClient(), election.Config{Name: "writer"})
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = e.Run(context.Background(), nil) }()

	http.HandleFunc("/publish", func(w http.ResponseWriter, r *http.Request) {
		term, ok := e.Term()
		if !ok {
			http.Error(w, "not the leader", http.StatusServiceUnavailable)
			return
		}
		// Safe even if leadership ends right now: the write carries the
		// epoch and is refused once a newer term has written.
		if err := term.Fencer.Set(r.Context(), "published", r.FormValue("v")); err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
		}
	})
}

// IsLeader is for display and metrics, never for deciding to write.
func ExampleElector_IsLeader() {
	e, err := election.New(newClient(), election.Config{Name: "writer"})
	if err != nil {
		log.Fatal(err)
	}
	http.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "leader=%v\n", e.IsLeader())
	})
}

// A node that only watches never calls Run.
func ExampleElector_Leader() {
	e, err := election.New(newClient(), election.Config{Name: "report-builder"})
	if err != nil {
		log.Fatal(err)
	}
	info, err := e.Leader(context.Background())
	switch {
	case errors.Is(err, election.ErrNoLeader):
		fmt.Println("nobody leads")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Printf("%s leads with epoch %d for at least %v more\n", info.NodeID, info.Epoch, info.TTL)
	}
}

func ExampleElector_Epoch() {
	e, err := election.New(newClient(), election.Config{Name: "writer"})
	if err != nil {
		log.Fatal(err)
	}
	if epoch, ok := e.Epoch(); ok {
		// For a resource that is not Redis: compare the epoch there, in the
		// same statement as the write (see package pgfence).
		fmt.Println("writing with epoch", epoch)
	}
}

// Wire the transitions to your own logger; the package logs nothing of
// its own (but see Config.Logger). These are the callbacks of client-go's
// leaderelection: fn's start and its context's end are OnStartedLeading
// and OnStoppedLeading, "leader_change" is OnNewLeader.
func ExampleConfig_hook() {
	_, err := election.New(newClient(), election.Config{
		Name: "report-builder",
		Hook: func(_ context.Context, e election.Event) {
			switch e.Op {
			case "elected":
				log.Printf("elected, epoch %d", e.Epoch)
			case "demoted":
				log.Printf("stepped down from epoch %d after %v: %v", e.Epoch, e.Held, e.Reason)
			case "follower":
				log.Printf("following %s (epoch %d)", e.Leader.NodeID, e.Leader.Epoch)
			case "leader_change":
				// Every node sees this, also one that never leads: route
				// requests to whoever leads now.
				log.Printf("leader is now %s at %s (epoch %d)", e.Leader.NodeID, e.Leader.Value, e.Leader.Epoch)
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
}

// A leader publishes where it serves; followers read it with Leader (or
// are told by a "leader_change" Event) and forward to it.
func ExampleConfig_value() {
	e, err := election.New(newClient(), election.Config{Name: "api-primary", Value: "10.0.0.7:8443"})
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = e.Run(context.Background(), nil) }()

	info, err := e.Leader(context.Background())
	if err == nil {
		fmt.Printf("forward writes to %s (node %s)\n", info.Value, info.NodeID)
	}
}

// Resign hands leadership over from outside fn, for example before a
// deploy drains this node: a follower is elected as soon as it returns.
func ExampleElector_Resign() {
	e, err := election.New(newClient(), election.Config{Name: "report-builder"})
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = e.Run(context.Background(), nil) }()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	switch err := e.Resign(ctx); {
	case errors.Is(err, election.ErrNotLeading):
		fmt.Println("not leading; nothing to hand over")
	case err != nil:
		log.Print(err)
	}
}

// Code that takes a fence.Fencer gets the term's with Fence; its stale
// refusals do not end the term, so return from fn on them yourself.
func ExampleFencer_Fence() {
	e, err := election.New(newClient(), election.Config{Name: "report-builder"})
	if err != nil {
		log.Fatal(err)
	}
	_ = e.Run(context.Background(), func(ctx context.Context, term election.Term) error {
		return saveReport(ctx, term.Fencer.Fence())
	})
}

func saveReport(ctx context.Context, f fence.Fencer) error {
	return f.Set(ctx, "report:latest", "...")
}

// fn can tell from its context why its term ended.
func ExampleDemotedError() {
	cause := context.Cause(demotedContext())
	var d *election.DemotedError
	if errors.As(cause, &d) {
		fmt.Println(d.Reason, errors.Is(cause, election.ErrDemoted))
	}
	// Output: deadline passed true
}

func demotedContext() context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&election.DemotedError{Epoch: 7, Reason: election.ReasonDeadlinePassed})
	return ctx
}

func ExampleReason_String() {
	for _, r := range []election.Reason{
		election.ReasonLeaseLost, election.ReasonUnreachable, election.ReasonDeadlinePassed,
		election.ReasonStopped, election.ReasonResigned,
	} {
		fmt.Println(r)
	}
	// Output:
	// lease lost
	// redis unreachable
	// deadline passed
	// stopped
	// resigned
}

// New makes no round trip, so this runs without a server.
func ExampleElector_NodeID() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	e, err := election.New(goredisadapter.New(rdb), election.Config{Name: "report-builder", NodeID: "worker-3"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(e.NodeID(), e.IsLeader())
	// Output: worker-3 false
}

// A liveness probe that restarts a node wedged while it believes it leads.
func ExampleElector_HealthHandler() {
	e, err := election.New(newClient(), election.Config{Name: "report-builder", TTL: 10 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = e.Run(context.Background(), nil) }()
	http.Handle("/healthz", e.HealthHandler(2*time.Second))
	log.Fatal(http.ListenAndServe(":8080", nil))
}

func ExampleElector_Healthy() {
	e, err := election.New(newClient(), election.Config{Name: "report-builder"})
	if err != nil {
		log.Fatal(err)
	}
	switch err := e.Healthy(time.Second); {
	case errors.Is(err, election.ErrPastDeadline):
		log.Fatal("wedged while leading: ", err)
	case errors.Is(err, election.ErrUnreachable):
		log.Fatal("cannot use Redis (down, or a wrong password): ", err)
	}
}

// A node that cannot reach Redis, or whose password Redis refuses, says so
// on every attempt instead of waiting silently as if it followed.
func ExampleConfig_attemptFailed() {
	e, err := election.New(newClient(), election.Config{
		Name:   "report-builder",
		Logger: slog.Default(), // one Warn line per failed attempt
		Hook: func(_ context.Context, ev election.Event) {
			if ev.Op == "attempt" && ev.GaveUp { // WRONGPASS, NOAUTH, NOPERM, a Redis too old: Run returns it
				log.Printf("election cannot run: %v", ev.Err)
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = e
}

// The Hook sees every attempt and renewal with its latency, and every
// transition, each with a context: a tracing or metrics adapter plugs in
// here (package telemetry's Election is one).
func ExampleEvent() {
	var slowRenewals atomic.Int64
	e, err := election.New(newClient(), election.Config{
		Name: "report-builder",
		Hook: func(ctx context.Context, ev election.Event) {
			switch {
			case ev.Op == "renew" && ev.Latency > 100*time.Millisecond:
				slowRenewals.Add(1) // a renewal this slow eats into the TTL
			case ev.Outcome == "error":
				log.Printf("election %s: %v", ev.Op, ev.Err)
			case ev.Op == "elected":
				log.Printf("leading, epoch %d", ev.Epoch)
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = e
}
