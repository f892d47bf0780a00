package election_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
)

// A leader stops and releases; how long until the follower is elected.
// Each iteration sets up two fresh nodes with the timer stopped; the
// reported handover-ms is measured from the stop to the follower's
// "elected" Event.
func BenchmarkHandover(b *testing.B) {
	s := redistest.Start(b)
	var total time.Duration
	n := 0
	for b.Loop() {
		b.StopTimer()
		n++
		d, _, _ := handover(b, s, fmt.Sprintf("bench-handover-%d", n), 2*time.Second, 500*time.Millisecond)
		total += d
		b.StartTimer()
	}
	// The operation is the handover: report its time as ns/op, not the
	// timer's, which was stopped around the set-up.
	b.ReportMetric(float64(total.Nanoseconds())/float64(n), "ns/op")
	b.ReportMetric(ms(total)/float64(n), "handover-ms")
}

// A leader stops renewing without releasing (its connection is stalled);
// how long until the follower is elected, from the stall and from the
// lease's expiry on the server. Each iteration lasts about one TTL (200ms).
func BenchmarkFailover(b *testing.B) {
	s := redistest.Start(b)
	const ttl, renew = 200 * time.Millisecond, 50 * time.Millisecond
	var fromStall, pastExpiry time.Duration
	n := 0
	for b.Loop() {
		b.StopTimer()
		n++
		r := failover(b, s, fmt.Sprintf("bench-failover-%d", n), ttl, renew, time.Duration(n%5)*renew/5)
		fromStall += r.fromStall
		pastExpiry += r.pastExpiry
		b.StartTimer()
	}
	b.ReportMetric(float64(fromStall.Nanoseconds())/float64(n), "ns/op")
	b.ReportMetric(ms(fromStall)/float64(n), "failover-ms")
	b.ReportMetric(ms(pastExpiry)/float64(n), "past-expiry-ms")
}
