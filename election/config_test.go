package election_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/goredisadapter"
)

// A renew interval at or above the TTL leaves the leader no chance to renew
// before its lease ends; one above TTL/2 leaves it only one. Both are
// refused by New, before any round trip (the client points nowhere).
func TestRenewIntervalNotWellBelowTTLIsRejected(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	for _, tc := range []struct {
		ttl, renew time.Duration
	}{
		{time.Second, time.Second},
		{time.Second, 2 * time.Second},
		{time.Second, 501 * time.Millisecond},
		{400 * time.Millisecond, 300 * time.Millisecond},
	} {
		_, err := election.New(goredisadapter.New(c), election.Config{Name: "n", TTL: tc.ttl, RenewInterval: tc.renew})
		if !errors.Is(err, election.ErrRenewInterval) || !errors.Is(err, election.ErrInvalidConfig) {
			t.Errorf("ttl %v renew %v: got %v, want ErrRenewInterval and ErrInvalidConfig", tc.ttl, tc.renew, err)
		} else if n := strings.Count(err.Error(), "election:"); n != 1 {
			t.Errorf("ttl %v renew %v: %q names the package %d times, want once", tc.ttl, tc.renew, err, n)
		} else {
			t.Logf("ttl %v renew %v: %v", tc.ttl, tc.renew, err)
		}
	}
	if _, err := election.New(goredisadapter.New(c), election.Config{Name: "n", TTL: time.Second, RenewInterval: 500 * time.Millisecond}); err != nil {
		t.Errorf("renew interval of exactly TTL/2 refused: %v", err)
	}
}

func TestBadConfigIsRejectedWithATypedErrorThatNamesThePackageOnce(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	for _, tc := range []struct {
		what string
		cfg  election.Config
	}{
		{"empty name", election.Config{}},
		{"negative ttl", election.Config{Name: "n", TTL: -time.Second}},
		{"ttl under 10ms", election.Config{Name: "n", TTL: 9 * time.Millisecond}},
		{"negative retry", election.Config{Name: "n", RetryInterval: -1}},
		{"negative margin", election.Config{Name: "n", SafetyMargin: -1}},
		{"margin leaves no time to renew", election.Config{Name: "n", TTL: time.Second, RenewInterval: 400 * time.Millisecond, SafetyMargin: 600 * time.Millisecond}},
		{"prefix with brace", election.Config{Name: "n", Prefix: "a{b"}},
	} {
		_, err := election.New(goredisadapter.New(c), tc.cfg)
		if !errors.Is(err, election.ErrInvalidConfig) {
			t.Errorf("%s: got %v, want ErrInvalidConfig", tc.what, err)
		} else if n := strings.Count(err.Error(), "election:"); n != 1 {
			t.Errorf("%s: %q names the package %d times, want once", tc.what, err, n)
		}
	}
	if _, err := election.New(nil, election.Config{Name: "n"}); !errors.Is(err, election.ErrNilClient) {
		t.Errorf("nil client: %v", err)
	}
	// goredisadapter.New(nil) is a nil *goredisadapter.Client.
	if _, err := election.New(goredisadapter.New(nil), election.Config{Name: "n"}); !errors.Is(err, election.ErrNilClient) {
		t.Errorf("typed nil client: %v", err)
	}
	e, err := election.New(goredisadapter.New(c), election.Config{Name: "n"})
	if err != nil {
		t.Fatalf("defaults refused: %v", err)
	}
	if e.NodeID() == "" || e.IsLeader() {
		t.Errorf("new elector: node id %q, leader %v", e.NodeID(), e.IsLeader())
	}
}

// One Elector is one node: a second concurrent Run would be a second
// contender sharing one identity's state.
func TestSecondConcurrentRunIsRefused(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 50 * time.Millisecond})
	defer c.Close()
	e, err := election.New(goredisadapter.New(c), election.Config{Name: "n", TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx, nil) }()
	time.Sleep(20 * time.Millisecond) // let the first Run start; it cannot reach Redis
	// Bounded, so that a second Run that wrongly starts fails the test
	// instead of hanging it.
	second, cancelSecond := context.WithTimeout(ctx, 2*time.Second)
	defer cancelSecond()
	if err := e.Run(second, nil); !errors.Is(err, election.ErrRunning) {
		t.Errorf("second Run: %v, want ErrRunning", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("first Run: %v, want context.Canceled", err)
	}
}

// An Elector not made by New has no client: every call that can fail
// returns ErrNilClient, as a zero lock.Locker's do. Run returned lock's
// ErrInvalidName for its empty name, and then Healthy reported Redis
// unreachable ("no attempt answered") although no attempt was ever sent.
func TestEveryCallOfAZeroElectorReturnsErrNilClient(t *testing.T) {
	ctx := context.Background()
	var zero election.Elector
	if err := zero.Run(ctx, nil); !errors.Is(err, election.ErrNilClient) {
		t.Errorf("Run: %v, want ErrNilClient", err)
	}
	if err := zero.Healthy(0); !errors.Is(err, election.ErrNilClient) {
		t.Errorf("Healthy after Run: %v, want ErrNilClient", err)
	}
	if code, body := probe(t, zero.HealthHandler(0)); code != http.StatusServiceUnavailable || !strings.Contains(body, election.ErrNilClient.Error()) {
		t.Errorf("HealthHandler: %d %q, want 503 with ErrNilClient", code, body)
	}
	if _, err := zero.Leader(ctx); !errors.Is(err, election.ErrNilClient) {
		t.Errorf("Leader: %v, want ErrNilClient", err)
	}
	if err := zero.Resign(ctx); !errors.Is(err, election.ErrNilClient) {
		t.Errorf("Resign: %v, want ErrNilClient", err)
	}
	if _, ok := zero.Term(); ok || zero.IsLeader() {
		t.Error("a zero Elector leads")
	}
}
