package election_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

// A name starting with '}' would empty the keys' hash tag; lock refuses it
// on every call, and Run used to take that refusal for a Redis hiccup and
// retry it silently until its context ended. New refuses it now.
func TestNameStartingWithABraceIsRefusedByNewInsteadOfRetriedForeverByRun(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	for _, name := range []string{"}x", "}", ""} {
		_, err := election.New(c, election.Config{Name: name})
		if !errors.Is(err, election.ErrInvalidConfig) || !errors.Is(err, lock.ErrInvalidName) {
			t.Errorf("name %q: %v, want ErrInvalidConfig and lock.ErrInvalidName", name, err)
		}
	}
}

// runUntilItGivesUp runs e and returns Run's error, failing t if Run took
// as long as one RetryInterval: a retry would have waited that long first.
func runUntilItGivesUp(t *testing.T, e *election.Elector, retry time.Duration) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*retry)
	defer cancel()
	start := time.Now()
	err := e.Run(ctx, func(ctx context.Context, _ election.Term) error {
		t.Error("elected although the server refuses the election's commands")
		<-ctx.Done()
		return nil
	})
	if took := time.Since(start); took >= retry {
		t.Errorf("Run returned after %v, not before the first retry (RetryInterval %v)", took, retry)
	}
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run retried until its context ended: %v", err)
	}
	return err
}

// redisCode returns the error code of the Redis error in err's chain.
func redisCode(err error) string {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return ""
	}
	code, _, _ := strings.Cut(rerr.Error(), " ")
	return code
}

const permanentTTL, permanentRetry = 3 * time.Second, time.Second

func permanentConfig(s *redistest.Server, name string) election.Config {
	cfg := baseConfig(s, name, "node", permanentTTL, permanentRetry)
	cfg.RetryInterval = permanentRetry
	return cfg
}

// An ACL that does not allow the scripts is a refusal no retry changes.
func TestRunStopsOnAnACLRefusalInsteadOfRetrying(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	admin := client(t, s)
	if err := admin.Do(context.Background(), "ACL", "SETUSER", "noscripts", "on", ">pw", "~*", "&*",
		"+@all", "-eval", "-evalsha", "-eval_ro", "-evalsha_ro").Err(); err != nil {
		t.Fatal(err)
	}
	c := client(t, s, func(o *redis.Options) { o.Username, o.Password = "noscripts", "pw" })
	e, err := election.New(c, permanentConfig(s, "acl"))
	if err != nil {
		t.Fatal(err)
	}
	err = runUntilItGivesUp(t, e, permanentRetry)
	if redisCode(err) != "NOPERM" {
		t.Fatalf("Run: %v, want the NOPERM refusal", err)
	}
	t.Logf("Run: %v", err)
}

// A key of another type where the election's counter belongs (package
// lock's layout: Prefix{Name}:token) fails every attempt the same way.
func TestRunStopsOnAWrongTypeKeyInsteadOfRetrying(t *testing.T) {
	s := redistest.Start(t)
	cfg := permanentConfig(s, "wrongtype")
	c := client(t, s)
	if err := c.HSet(context.Background(), cfg.Prefix+"{"+cfg.Name+"}:token", "f", "v").Err(); err != nil {
		t.Fatal(err)
	}
	e, err := election.New(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = runUntilItGivesUp(t, e, permanentRetry)
	if !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Fatalf("Run: %v, want the WRONGTYPE error", err)
	}
	t.Logf("Run: %v", err)
}

// A server without a command the election needs (a Redis too old for it;
// here EVALSHA renamed away) answers "unknown command" to every attempt.
func TestRunStopsOnAServerWithoutTheCommandsInsteadOfRetrying(t *testing.T) {
	s := redistest.Start(t, redistest.Args("--rename-command", "EVALSHA", ""))
	e, err := election.New(client(t, s), permanentConfig(s, "tooold"))
	if err != nil {
		t.Fatal(err)
	}
	err = runUntilItGivesUp(t, e, permanentRetry)
	if !strings.Contains(err.Error(), "unknown command") {
		t.Fatalf("Run: %v, want the unknown command error", err)
	}
	t.Logf("Run: %v", err)
}

// A leader whose fenced writes are all refused as stale leads in name only:
// a newer epoch has written. The first refusal through Term.Fencer ends the
// term, with its own reason, even though fn goes on waiting instead of
// returning; fn's context says why; Run goes on and contends again.
func TestTermWhoseFencedWriteIsRefusedAsStaleEndsFencedOutInsteadOfLeadingInName(t *testing.T) {
	s := redistest.Start(t)
	c := client(t, s)
	store, err := fence.New(c)
	if err != nil {
		t.Fatal(err)
	}
	key := s.Prefix() + "fencedout:data"
	const ttl, renew = 2 * time.Second, 200 * time.Millisecond
	cfg := baseConfig(s, "fencedout", "a", ttl, renew)
	cfg.Fence = store
	causes := make(chan error, 4)
	n := startNode(t, c, cfg, func(ctx context.Context, term election.Term) error {
		// A newer term (of this election or another writer) has written:
		// 2^40 above, far past any epoch this test will be issued, counter
		// or hybrid clock (2^40 µs is 12 days).
		if err := store.Set(ctx, term.Epoch+1<<40, key, "newer"); err != nil {
			return err
		}
		if err := term.Fencer.Set(ctx, key, "mine"); !errors.Is(err, fence.ErrStale) {
			t.Errorf("write with epoch %d: %v, want ErrStale", term.Epoch, err)
		}
		<-ctx.Done() // deliberately not returning: the term must end anyway
		causes <- context.Cause(ctx)
		return nil
	})
	first := n.rec.nth(t, 5*time.Second, "elected", 1)
	d := n.rec.nth(t, renew, "demoted", 1) // at once, not at a renewal or the TTL
	if d.reason != election.ReasonFencedOut || d.epoch != first.epoch {
		t.Fatalf("demoted epoch %d for %v, want epoch %d fenced out", d.epoch, d.reason, first.epoch)
	}
	var de *election.DemotedError
	if cause := <-causes; !errors.As(cause, &de) || de.Reason != election.ReasonFencedOut {
		t.Fatalf("fn's context cause: %v, want a DemotedError with ReasonFencedOut", cause)
	}
	if n.e.IsLeader() {
		t.Error("IsLeader true after the term was fenced out")
	}
	// Released, and re-contended after one RetryInterval.
	second := n.rec.nth(t, ttl, "elected", 2)
	if second.epoch <= first.epoch {
		t.Errorf("next term's epoch %d, want above %d", second.epoch, first.epoch)
	}
	if gap := second.at.Sub(d.at); gap < cfg.RetryInterval || gap >= ttl {
		t.Errorf("re-elected %v after the demotion, want at least RetryInterval %v and before the TTL %v (the lease was released)", gap, cfg.RetryInterval, ttl)
	}
}

// fn told to stop on ErrStale returns it; Run takes that for the term's end,
// not for fn's failure.
func TestFnReturningErrStaleEndsTheTermFencedOutAndRunGoesOn(t *testing.T) {
	s := redistest.Start(t)
	c := client(t, s)
	store, err := fence.New(c)
	if err != nil {
		t.Fatal(err)
	}
	key := s.Prefix() + "fencedout2:data"
	const ttl, renew = 2 * time.Second, 200 * time.Millisecond
	cfg := baseConfig(s, "fencedout2", "a", ttl, renew)
	cfg.Fence = store
	n := startNode(t, c, cfg, func(ctx context.Context, term election.Term) error {
		if err := store.Set(ctx, term.Epoch+1<<40, key, "newer"); err != nil {
			return err
		}
		return term.Fencer.Set(ctx, key, "mine")
	})
	d := n.rec.nth(t, 5*time.Second, "demoted", 1)
	if d.reason != election.ReasonFencedOut {
		t.Fatalf("demoted for %v, want %v", d.reason, election.ReasonFencedOut)
	}
	n.rec.nth(t, ttl, "elected", 2) // Run went on
	select {
	case err := <-n.done:
		t.Fatalf("Run returned %v after a stale refusal", err)
	default:
	}
}
