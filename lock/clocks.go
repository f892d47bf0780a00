package lock

import (
	"context"
	"fmt"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

// CheckReplicaClocks compares the clock (TIME) of each replica, read with
// a Client of that replica (goredisadapter.New(rdb) on go-redis), with the
// clock of the Locker's server, and returns, in words, one problem per
// replica whose clock differs by more than maxSkew beyond what the round
// trips of the measurement can explain. Empty means none was found.
//
// Tokens are max(counter + 1, the server's time in µs): after a failover to
// a replica that missed the last acquisitions, the first token is above
// every earlier one only if the replica's clock is behind the old
// primary's by less than the time between the last acquisition on the one
// and the first on the other. Call it at start-up, with a maxSkew well
// under your failover time, alongside Preflight.
//
// A nil replica (goredisadapter.New(nil) among them) is refused with an
// error matching ErrNilClient, before any round trip.
func (l *Locker) CheckReplicaClocks(ctx context.Context, maxSkew time.Duration, replicas ...Client) ([]string, error) {
	if maxSkew < 0 {
		return nil, fmt.Errorf("%w: negative maximum skew %v", ErrInvalidOption, maxSkew)
	}
	for i, r := range replicas {
		if luascripts.IsNil(r) {
			return nil, fmt.Errorf("%w: replica %d", ErrNilClient, i)
		}
	}
	if err := l.core().Ready(); err != nil {
		return nil, err
	}
	var problems []string
	for i, r := range replicas {
		skew, uncertainty, err := l.skew(ctx, r)
		if err != nil {
			return nil, errs.Call(ctx, "check replica clocks", fmt.Sprint("replica ", i), err)
		}
		if d := skew.Abs() - uncertainty; d > maxSkew {
			problems = append(problems, fmt.Sprintf(
				"replica %d: clock %v off the primary's (±%v), more than %v: after a failover to it, tokens may be reissued",
				i, skew.Round(time.Microsecond), uncertainty.Round(time.Microsecond), maxSkew))
		}
	}
	return problems, nil
}

// skew measures r's clock minus the primary's, and the uncertainty of that
// figure: half of each TIME's round trip.
func (l *Locker) skew(ctx context.Context, r Client) (skew, uncertainty time.Duration, err error) {
	t0 := time.Now()
	p, err := l.cfg.Client.Time(ctx)
	if err != nil {
		return 0, 0, err
	}
	t1 := time.Now()
	q, err := r.Time(ctx)
	if err != nil {
		return 0, 0, err
	}
	t2 := time.Now()
	// Each server read its clock somewhere in its round trip: compare the
	// two readings with the local time elapsed between the midpoints.
	elapsed := t2.Sub(t1)/2 + t1.Sub(t0)/2
	return q.Sub(p) - elapsed, t1.Sub(t0)/2 + t2.Sub(t1)/2, nil
}
