package telemetry_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/telemetry"
)

// Rejections are counted by the limit that bound them, admissions by the
// limit with the fewest left; a Redis error is its own series; keys are
// attributes only WithKeys.
func TestRateLimitRejectionsAreCountedByTheBindingLimit(t *testing.T) {
	s := redistest.Start(t)
	o := newOtel(t)
	c := s.Client(t)
	l, err := ratelimit.New(goredisadapter.New(c), ratelimit.WithPrefix(s.Prefix()), ratelimit.WithHook(o.RateLimit))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	policy := ratelimit.Policy{
		ratelimit.SlidingLog(2, time.Minute).Named("burst"),
		ratelimit.SlidingCounter(100, time.Hour).Named("hourly"),
	}
	for range 5 {
		if _, err := l.Allow(ctx, "user:1", policy); err != nil {
			t.Fatal(err)
		}
	}
	_ = c.Close()
	_, _ = l.Allow(ctx, "user:1", ratelimit.GCRA(1, time.Second, 1).Named("gcra"))

	op, out, lim := attribute.Key("ratelimit.operation").String("allow"), attribute.Key("ratelimit.outcome"), attribute.Key("ratelimit.limit.name")
	for _, c := range []struct {
		outcome, limit string
		want           int64
	}{{"allowed", "burst", 2}, {"rejected", "burst", 3}, {"error", "gcra", 1}} {
		if got := o.value(t, "ratelimit.decisions", op, out.String(c.outcome), lim.String(c.limit)); got != c.want {
			t.Errorf("ratelimit.decisions{%s %s} = %d, want %d", c.outcome, c.limit, got, c.want)
		}
		if got := o.value(t, "ratelimit.decision.duration", op, out.String(c.outcome), lim.String(c.limit)); got != c.want {
			t.Errorf("ratelimit.decision.duration{%s %s} count %d, want %d", c.outcome, c.limit, got, c.want)
		}
	}
	for _, p := range o.points(t, "ratelimit.decisions") {
		if _, ok := p.attrs.Value(attribute.Key("ratelimit.key")); ok {
			t.Errorf("key recorded without WithKeys: %v", p.attrs)
		}
	}
	if sp := o.spanNamed("ratelimit.allow"); len(sp) != 6 {
		t.Errorf("%d ratelimit.allow spans, want 6", len(sp))
	}
}

func TestRateLimitKeyIsAnAttributeOnlyWhenAskedFor(t *testing.T) {
	s := redistest.Start(t)
	o := newOtel(t, telemetry.WithKeys())
	l, err := ratelimit.New(goredisadapter.New(s.Client(t)), ratelimit.WithPrefix(s.Prefix()), ratelimit.WithHook(o.RateLimit))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Peek(context.Background(), "user:1", ratelimit.GCRA(1, time.Second, 1).Named("g")); err != nil {
		t.Fatal(err)
	}
	if got := o.value(t, "ratelimit.decisions", attribute.Key("ratelimit.operation").String("peek"),
		attribute.Key("ratelimit.outcome").String("allowed"), attribute.Key("ratelimit.limit.name").String("g"),
		attribute.Key("ratelimit.key").String("user:1")); got != 1 {
		t.Errorf("peek{key=user:1} = %d, want 1", got)
	}
}

// An answer from the deny cache is counted as a decision, marked cached,
// and not timed: the duration histogram holds round trips only.
func TestRateLimitAnswersFromTheDenyCacheAreMarkedAndNotTimed(t *testing.T) {
	s := redistest.Start(t)
	o := newOtel(t)
	l, err := ratelimit.New(goredisadapter.New(s.Client(t)), ratelimit.WithPrefix(s.Prefix()), ratelimit.WithDenyCache(16), ratelimit.WithHook(o.RateLimit))
	if err != nil {
		t.Fatal(err)
	}
	lim := ratelimit.GCRA(1, time.Hour, 1).Named("hourly")
	for range 5 { // admitted, rejected by the server, then 3 by the cache
		if _, err := l.Allow(context.Background(), "user:1", lim); err != nil {
			t.Fatal(err)
		}
	}
	op, rejected, name := attribute.Key("ratelimit.operation").String("allow"), attribute.Key("ratelimit.outcome").String("rejected"), attribute.Key("ratelimit.limit.name").String("hourly")
	cached := attribute.Key("ratelimit.cached").Bool(true)
	if got := o.value(t, "ratelimit.decisions", op, rejected, name, cached); got != 3 {
		t.Errorf("ratelimit.decisions{rejected, cached} = %d, want 3", got)
	}
	if got := o.value(t, "ratelimit.decisions", op, rejected, name); got != 1 {
		t.Errorf("ratelimit.decisions{rejected} = %d, want 1, from the server", got)
	}
	if got := o.value(t, "ratelimit.decision.duration", op, rejected, name, cached); got != 0 {
		t.Errorf("ratelimit.decision.duration{rejected, cached} count %d, want 0", got)
	}
	if got := o.value(t, "ratelimit.decision.duration", op, rejected, name); got != 1 {
		t.Errorf("ratelimit.decision.duration{rejected} count %d, want 1: the server's", got)
	}
}

// A Commit past the reservation's expiry is the server's verdict, counted
// as expired: counted as error, it raised the alarm on Redis failures.
func TestRateLimitExpiredCommitIsCountedAsExpiredNotAsError(t *testing.T) {
	s := redistest.Start(t)
	o := newOtel(t)
	var mu sync.Mutex
	now := time.UnixMilli(1_750_000_000_000)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	l, err := ratelimit.New(goredisadapter.New(s.Client(t)), ratelimit.WithPrefix(s.Prefix()), ratelimit.WithServerTimeForTests(clock), ratelimit.WithHook(o.RateLimit))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rs, err := l.Reserve(ctx, "user:1", ratelimit.SlidingLog(10, time.Hour).Named("hourly"), 2, time.Minute)
	if err != nil || !rs.Result.Allowed {
		t.Fatal(rs, err)
	}
	mu.Lock()
	now = rs.Expires
	mu.Unlock()
	if _, err := rs.Commit(ctx, 1); !errors.Is(err, ratelimit.ErrExpired) {
		t.Fatalf("commit past the expiry: %v, want ErrExpired", err)
	}
	op, out, name := attribute.Key("ratelimit.operation").String("commit"), attribute.Key("ratelimit.outcome"), attribute.Key("ratelimit.limit.name").String("hourly")
	if got := o.value(t, "ratelimit.decisions", op, out.String("expired"), name); got != 1 {
		t.Errorf("ratelimit.decisions{commit, expired} = %d, want 1", got)
	}
	if got := o.value(t, "ratelimit.decisions", op, out.String("error"), name); got != 0 {
		t.Errorf("ratelimit.decisions{commit, error} = %d, want 0", got)
	}
}

// A Wait is its attempts, each an allow decision, and one
// ratelimit.wait.duration point and "ratelimit.wait" span for the whole
// call: counted as a decision of its own, a caller that waited and got
// through added a decision to the dashboard that no request made.
func TestRateLimitWaitIsTimedAsAWholeAndNotCountedAsADecision(t *testing.T) {
	s := redistest.Start(t)
	o := newOtel(t)
	l, err := ratelimit.New(goredisadapter.New(s.Client(t)), ratelimit.WithPrefix(s.Prefix()), ratelimit.WithHook(o.RateLimit))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const every = 200 * time.Millisecond
	lim := ratelimit.GCRA(1, every, 1).Named("slow")
	if _, err := l.Allow(ctx, "user:1", lim); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Wait(ctx, "user:1", lim); err != nil {
		t.Fatal(err)
	}
	allowed, name := attribute.Key("ratelimit.outcome").String("allowed"), attribute.Key("ratelimit.limit.name").String("slow")
	if got := o.value(t, "ratelimit.wait.duration", allowed, name); got != 1 {
		t.Errorf("ratelimit.wait.duration{allowed, slow} count %d, want 1", got)
	}
	if got := o.value(t, "ratelimit.decisions", attribute.Key("ratelimit.operation").String("allow"), allowed, name); got != 2 {
		t.Errorf("ratelimit.decisions{allow, allowed} = %d, want 2: the Allow and the Wait's last attempt", got)
	}
	for _, p := range o.points(t, "ratelimit.decisions") {
		if op, _ := p.attrs.Value(attribute.Key("ratelimit.operation")); op.AsString() == "wait" {
			t.Errorf("a Wait counted as a decision: %v", p.attrs)
		}
	}
	sp := o.spanNamed("ratelimit.wait")
	if len(sp) != 1 {
		t.Fatalf("%d ratelimit.wait spans, want 1", len(sp))
	}
	if took := sp[0].EndTime.Sub(sp[0].StartTime); took < every/2 {
		t.Errorf("the ratelimit.wait span lasts %v, want the wait (about %v)", took, every)
	}
}
