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
	"github.com/redis-primitives/go/goredisadapter"
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
		_, err := election.New(goredisadapter.New(c), election.Config{Name: name})
		if !errors.Is(err, election.ErrInvalidConfig) || !errors.Is(err, lock.ErrInvalidName) {
			t.Errorf("name %q: %v, want ErrInvalidConfig and lock.ErrInvalidName", name, err)
		}
	}
}

// runUntilItGivesUp runs an Elector for cfg on c and returns Run's
// error, failing t if Run took as long as one RetryInterval (a retry would
// have waited that long first) or if the error does not contain want.
func runUntilItGivesUp(t *testing.T, c *redis.Client, cfg election.Config, want string) error {
	t.Helper()
	e, err := election.New(goredisadapter.New(c), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*cfg.RetryInterval)
	defer cancel()
	start := time.Now()
	err = e.Run(ctx, func(ctx context.Context, _ election.Term) error {
		t.Error("elected although the server refuses the election's commands")
		<-ctx.Done()
		return nil
	})
	if took := time.Since(start); took >= cfg.RetryInterval {
		t.Errorf("Run returned after %v, not before the first retry (RetryInterval %v)", took, cfg.RetryInterval)
	}
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run retried until its context ended: %v", err)
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Run: %v, want an error saying %q", err, want)
	}
	t.Logf("Run: %v", err)
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
	if err := runUntilItGivesUp(t, c, permanentConfig(s, "acl"), "NOPERM"); redisCode(err) != "NOPERM" {
		t.Fatalf("Run: %v, want a redis.Error with code NOPERM", err)
	}
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
	runUntilItGivesUp(t, c, cfg, "WRONGTYPE")
}

// A server without a command the election needs (a Redis too old for it;
// here EVALSHA renamed away) answers "unknown command" to every attempt.
func TestRunStopsOnAServerWithoutTheCommandsInsteadOfRetrying(t *testing.T) {
	s := redistest.Start(t, redistest.Args("--rename-command", "EVALSHA", ""))
	runUntilItGivesUp(t, client(t, s), permanentConfig(s, "tooold"), "unknown command")
}

const staleTTL, staleRenew = 2 * time.Second, 200 * time.Millisecond

// startFencedOutNode runs a node whose every term finds its key already
// written by a newer term, then runs write(term) with that key.
func startFencedOutNode(t *testing.T, name string, write func(ctx context.Context, term election.Term, key string) error) (*node, election.Config) {
	t.Helper()
	s := redistest.Start(t)
	c := client(t, s)
	store, err := fence.New(goredisadapter.New(c))
	if err != nil {
		t.Fatal(err)
	}
	key := s.Prefix() + name + ":data"
	cfg := baseConfig(s, name, "a", staleTTL, staleRenew)
	cfg.Fence = store
	return startNode(t, c, cfg, func(ctx context.Context, term election.Term) error {
		// A newer term (of this election or another writer) has written:
		// 2^40 above, far past any epoch this test will be issued, counter
		// or hybrid clock (2^40 µs is 12 days).
		if err := store.Set(ctx, term.Epoch+1<<40, key, "newer"); err != nil {
			return err
		}
		return write(ctx, term, key)
	}), cfg
}

// A leader whose fenced writes are all refused as stale leads in name only:
// a newer epoch has written. The first refusal through Term.Fencer ends the
// term, with its own reason, even though fn goes on waiting instead of
// returning; fn's context says why; Run goes on and contends again.
func TestTermWhoseFencedWriteIsRefusedAsStaleEndsFencedOutInsteadOfLeadingInName(t *testing.T) {
	causes := make(chan error, 4)
	// The first term's write; later terms may be cut short by the test's end.
	writes := make(chan error, 1)
	n, cfg := startFencedOutNode(t, "fencedout", func(ctx context.Context, term election.Term, key string) error {
		err := term.Fencer.Set(ctx, key, "mine")
		select {
		case writes <- err:
		default:
		}
		<-ctx.Done() // deliberately not returning: the term must end anyway
		causes <- context.Cause(ctx)
		return nil
	})
	first := n.rec.nth(t, 5*time.Second, "elected", 1)
	if err := <-writes; !errors.Is(err, fence.ErrStale) {
		t.Errorf("first term's write with epoch %d: %v, want ErrStale", first.epoch, err)
	}
	d := n.rec.nth(t, staleRenew, "demoted", 1) // at once, not at a renewal or the TTL
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
	second := n.rec.nth(t, staleTTL, "elected", 2)
	if second.epoch <= first.epoch {
		t.Errorf("next term's epoch %d, want above %d", second.epoch, first.epoch)
	}
	if gap := second.at.Sub(d.at); gap < cfg.RetryInterval || gap >= staleTTL {
		t.Errorf("re-elected %v after the demotion, want at least RetryInterval %v and before the TTL %v (the lease was released)", gap, cfg.RetryInterval, staleTTL)
	}
}

// fn told to stop on ErrStale returns it; Run takes that for the term's end,
// not for fn's failure.
func TestFnReturningErrStaleEndsTheTermFencedOutAndRunGoesOn(t *testing.T) {
	n, _ := startFencedOutNode(t, "fencedout2", func(ctx context.Context, term election.Term, key string) error {
		return term.Fencer.Set(ctx, key, "mine")
	})
	d := n.rec.nth(t, 5*time.Second, "demoted", 1)
	if d.reason != election.ReasonFencedOut {
		t.Fatalf("demoted for %v, want %v", d.reason, election.ReasonFencedOut)
	}
	n.rec.nth(t, staleTTL, "elected", 2) // Run went on
	select {
	case err := <-n.done:
		t.Fatalf("Run returned %v after a stale refusal", err)
	default:
	}
}

// A wrong password is refused the same way on every attempt: a rotated
// secret must not look like a follower waiting its turn.
func TestRunStopsOnAWrongPasswordInsteadOfRetrying(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	if err := client(t, s).Do(context.Background(), "ACL", "SETUSER", "app", "on", ">right", "~*", "&*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	c := client(t, s, func(o *redis.Options) { o.Username, o.Password = "app", "wrong" })
	if err := runUntilItGivesUp(t, c, permanentConfig(s, "wrongpass"), "WRONGPASS"); redisCode(err) != "WRONGPASS" {
		t.Fatalf("Run: %v, want a redis.Error with code WRONGPASS", err)
	}
}

// A server that requires a password the node does not give answers NOAUTH
// to every attempt.
func TestRunStopsWithoutThePasswordTheServerRequiresInsteadOfRetrying(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	admin := client(t, s)
	// The admin connection stays authenticated; new ones must give it.
	if err := admin.Do(context.Background(), "CONFIG", "SET", "requirepass", "secret").Err(); err != nil {
		t.Fatal(err)
	}
	c := client(t, s)
	if err := runUntilItGivesUp(t, c, permanentConfig(s, "noauth"), "NOAUTH"); redisCode(err) != "NOAUTH" {
		t.Fatalf("Run: %v, want a redis.Error with code NOAUTH", err)
	}
}

// Redis 6.2 refuses the acquire script with "ERR syntax error" (its SET
// with NX and GET is 7.0's): on every attempt, so Run returns it, matching
// lock.ErrRedisTooOld, instead of retrying until its context ends.
func TestRunStopsOnRedis62sRefusalOfTheAcquireScriptInsteadOfRetrying(t *testing.T) {
	s := redistest.Start(t)
	r := redistest.StartRedis62(t, s.Addr())
	c := client(t, s, func(o *redis.Options) { o.Addr = r.Addr() })
	if err := runUntilItGivesUp(t, c, permanentConfig(s, "redis62"), "needs Redis 7.0"); !errors.Is(err, lock.ErrRedisTooOld) {
		t.Fatalf("Run: %v, want an error matching lock.ErrRedisTooOld", err)
	}
}

// A password rotated while the node runs: its connections are closed, and
// each one it dials again is refused with WRONGPASS. That refusal comes
// back on every attempt, on the leader's renewals and the follower's
// acquires alike, so Run returns it instead of looking like a follower
// waiting its turn; on rueidis and valkey-go, whose clients refuse a wrong
// password when they are made, this is how a wrong password shows.
func TestRunStopsWhenItsPasswordIsRotatedAwayInsteadOfRetrying(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	admin := client(t, s)
	ctx := context.Background()
	if err := admin.Do(ctx, "ACL", "SETUSER", "app", "on", ">right", "~*", "&*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	c := client(t, s, func(o *redis.Options) { o.Username, o.Password = "app", "right" })
	cfg := permanentConfig(s, "rotated")
	e, err := election.New(goredisadapter.New(c), cfg)
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, 10*cfg.TTL)
	defer cancel()
	elected := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- e.Run(rctx, func(ctx context.Context, _ election.Term) error {
			close(elected)
			<-ctx.Done()
			return nil
		})
	}()
	select {
	case <-elected:
	case err := <-done:
		t.Fatalf("Run before the rotation: %v", err)
	}
	if err := admin.Do(ctx, "ACL", "SETUSER", "app", "resetpass", ">new").Err(); err != nil {
		t.Fatal(err)
	}
	rotated := time.Now()
	if err := admin.Do(ctx, "CLIENT", "KILL", "USER", "app").Err(); err != nil {
		t.Fatal(err)
	}
	// The leader's next renewal fails on the closed connection; the next
	// call dials and is refused; one RetryInterval later at most, again.
	bound := cfg.TTL + 2*cfg.RetryInterval
	select {
	case err = <-done:
	case <-time.After(bound):
		t.Fatalf("Run still running %v after its password was rotated away", bound)
	}
	t.Logf("Run returned %v after the rotation: %v", time.Since(rotated).Round(time.Millisecond), err)
	if redisCode(err) != "WRONGPASS" || rctx.Err() != nil {
		t.Fatalf("Run: %v, want a redis.Error with code WRONGPASS", err)
	}
}
