package ratelimit_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/internal/redistest/naiveratelimit"
	"github.com/redis-primitives/go/ratelimit"
)

// burstAcrossBoundary is 5 requests at the end of one 1000ms bucket and 5
// at the start of the next, 104ms from first to last.
func burstAcrossBoundary() []time.Time {
	boundary := epoch.Add(10 * time.Second) // a bucket boundary: epoch is a whole second
	var at []time.Time
	for i := range 5 {
		at = append(at, boundary.Add(time.Duration(-52+10*i)*time.Millisecond)) // -52 .. -12
	}
	for i := range 5 {
		at = append(at, boundary.Add(time.Duration(12+10*i)*time.Millisecond)) // +12 .. +52
	}
	return at
}

// maxInWindow is the most of the sorted times that fall in any half-open
// window (t-w, t].
func maxInWindow(times []time.Time, w time.Duration) int {
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	most, lo := 0, 0
	for hi := range times {
		for !times[lo].After(times[hi].Add(-w)) {
			lo++
		}
		most = max(most, hi-lo+1)
	}
	return most
}

func TestNaiveFixedWindowAdmitsTwiceTheLimitAcrossABoundary(t *testing.T) {
	s := redistest.Start(t)
	clk := newClock(epoch)
	fw := &naiveratelimit.FixedWindow{Client: s.Client(t), Limit: 5, Window: time.Second, Now: clk.Now}
	var admitted []time.Time
	for _, at := range burstAcrossBoundary() {
		clk.Set(at)
		ok, err := fw.Allow(context.Background(), s.Prefix()+"fixed")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			admitted = append(admitted, at)
		}
	}
	span := admitted[len(admitted)-1].Sub(admitted[0])
	t.Logf("naive fixed window: %d/10 admitted within %v against a limit of 5 per 1000ms", len(admitted), span)
	if len(admitted) != 10 || span > 104*time.Millisecond {
		t.Fatalf("admitted %d within %v; the fixed window should admit all 10 within 104ms", len(admitted), span)
	}
	if got := maxInWindow(admitted, time.Second); got != 10 {
		t.Fatalf("at most %d in one 1000ms window, want 10 (2x the limit)", got)
	}
}

func TestLimitersHoldTheLimitThroughTheBoundaryBurst(t *testing.T) {
	for name, lim := range algorithms(5, time.Second) {
		t.Run(name, func(t *testing.T) {
			s := redistest.Start(t)
			clk := newClock(epoch)
			_, l := limiter(t, s, ratelimit.WithServerTimeForTests(clk.Now))
			var admitted []time.Time
			for _, at := range burstAcrossBoundary() {
				clk.Set(at)
				if allow(t, l, "k", lim).Allowed {
					admitted = append(admitted, at)
				}
			}
			most := maxInWindow(admitted, time.Second)
			t.Logf("%s: %d/10 admitted, at most %d in any 1000ms window (limit 5)", name, len(admitted), most)
			if most > 5 {
				t.Fatalf("%d requests in one 1000ms window, limit 5", most)
			}
			if len(admitted) != 5 {
				t.Fatalf("admitted %d, want exactly 5 (none of the second five fits)", len(admitted))
			}
		})
	}
}

func TestNaiveIncrThenExpireLeavesACounterThatNeverExpires(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	clk := newClock(epoch.Add(500 * time.Millisecond)) // both calls must name the same bucket
	fw := &naiveratelimit.FixedWindow{Client: c, Limit: 5, Window: time.Second, Now: clk.Now}
	key := s.Prefix() + "crash"
	if _, err := fw.AllowCrashingAfterIncr(ctx, key); err != nil {
		t.Fatal(err)
	}
	ttl, err := c.PTTL(ctx, fw.BucketKey(key)).Result()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("counter %s after INCR without EXPIRE: PTTL %d (-1: no TTL)", fw.BucketKey(key), ttl)
	if ttl != -1 {
		t.Fatalf("PTTL = %v, want -1 (exists, no TTL): the crash leaves the counter forever", ttl)
	}
}
