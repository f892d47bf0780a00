package ratelimittest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/internal/model"
)

// A Reservation is an amount held by Limiter.Reserve, as a
// *ratelimit.Reservation holds one, with the same fields and its methods
// but Keep: settled by Commit or Cancel, moved on by Extend, released at
// its expiry on the Limiter's clock by the next reservation call of its
// key and rule.
type Reservation struct {
	// ID, Amount, Result, At and Expires are ratelimit.Reservation's.
	ID          string
	Amount      int
	Result      ratelimit.Result
	At, Expires time.Time

	l      *Limiter
	key    string
	rule   ratelimit.Rule
	limits []ratelimit.Limit // the rule's, as check gave them
	keys   []string
	lims   []model.Limit
	rkey   string
	mu     sync.Mutex
	exp    int64
	closed bool
}

// Reserve charges amount against every limit of r on key, all or none, and
// holds it until Commit, Cancel or its expiry ttl later, as
// ratelimit.Limiter.Reserve.
func (l *Limiter) Reserve(ctx context.Context, key string, r ratelimit.Rule, amount int, ttl time.Duration) (*Reservation, error) {
	lims, err := check(key, r, amount)
	if err == nil && (ttl < time.Millisecond || ttl > ratelimit.MaxReservationTTL) {
		err = fmt.Errorf("%w: %v, must be from 1ms to %v", ratelimit.ErrInvalidTTL, ttl, ratelimit.MaxReservationTTL)
	}
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ratelimit: reserve on %q: %w", key, err)
	}
	if p, ok := r.(ratelimit.Policy); ok {
		r = append(ratelimit.Policy(nil), p...) // the caller's may change
	}
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	rs := &Reservation{Amount: amount, l: l, key: key, rule: r, limits: slices.Clone(lims), closed: true}
	rs.keys, rs.lims, rs.rkey = modelCall(key, r, lims)
	l.mu.Lock()
	defer l.mu.Unlock()
	rep, at, exp := l.state().Reserve(l.now().UnixMicro(), rs.keys, rs.rkey, rs.lims, int64(amount), ttl.Microseconds(), hex.EncodeToString(id[:]))
	rs.Result = result(rep, r)
	if rep.Allowed {
		rs.ID, rs.exp, rs.closed = hex.EncodeToString(id[:]), exp, false
		rs.At, rs.Expires = time.UnixMicro(at), time.UnixMicro(exp)
	}
	return rs, nil
}

// Commit charges actual and gives back the rest, or charges an excess as
// Take would, as ratelimit.Reservation.Commit.
func (r *Reservation) Commit(ctx context.Context, actual int) (ratelimit.Result, error) {
	if actual < 0 {
		return ratelimit.Result{}, fmt.Errorf("%w: actual %d, must not be negative", ratelimit.ErrInvalidN, actual)
	}
	return r.settle(ctx, "commit", actual)
}

// Cancel gives the whole reservation back, as ratelimit.Reservation.Cancel.
func (r *Reservation) Cancel(ctx context.Context) (ratelimit.Result, error) {
	return r.settle(ctx, "cancel", 0)
}

// Extend moves the expiry d later, as ratelimit.Reservation.Extend.
func (r *Reservation) Extend(ctx context.Context, d time.Duration) error {
	if d < time.Millisecond || d > ratelimit.MaxReservationTTL {
		return fmt.Errorf("%w: extend by %v, must be from 1ms to %v", ratelimit.ErrInvalidTTL, d, ratelimit.MaxReservationTTL)
	}
	_, err := r.settle(ctx, "extend", int(d.Microseconds()))
	return err
}

// settle runs a Commit, a Cancel or an Extend (by n µs) on the model, as
// ratelimit's decide does on the server.
func (r *Reservation) settle(ctx context.Context, op string, n int) (ratelimit.Result, error) {
	if r == nil {
		return ratelimit.Result{}, fmt.Errorf("%w: nil reservation", ratelimit.ErrSettled)
	}
	if r.l == nil {
		return ratelimit.Result{}, fmt.Errorf("%w: %s of a zero Reservation", ratelimit.ErrSettled, op)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ratelimit.Result{}, fmt.Errorf("%w: %s of reservation %q on %q", ratelimit.ErrSettled, op, r.ID, r.key)
	}
	if op == "commit" {
		for _, lim := range r.limits {
			if err := charges(lim, n); err != nil {
				return ratelimit.Result{}, err
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return ratelimit.Result{}, fmt.Errorf("ratelimit: %s on %q: %w", op, r.key, err)
	}
	l := r.l
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now().UnixMicro()
	r.closed = true
	if op == "extend" {
		switch l.state().Extend(now, r.rkey, r.ID, r.exp, r.exp+int64(n)) {
		case model.Gone:
			return ratelimit.Result{}, fmt.Errorf("%w: extend of reservation %q on %q", ratelimit.ErrExpired, r.ID, r.key)
		case model.Committed, model.Canceled:
			return ratelimit.Result{}, fmt.Errorf("%w: extend of reservation %q on %q, which was settled first", ratelimit.ErrSettled, r.ID, r.key)
		}
		r.closed, r.exp = false, r.exp+int64(n)
		r.Expires = time.UnixMicro(r.exp)
		return ratelimit.Result{Allowed: true}, nil
	}
	st, charged, rep := l.state().Settle(now, r.keys, r.rkey, r.lims, int64(n), op == "cancel", r.ID, r.exp)
	switch {
	case st == model.Gone && op == "commit":
		return ratelimit.Result{}, fmt.Errorf("%w: commit of reservation %q on %q", ratelimit.ErrExpired, r.ID, r.key)
	case st == model.Committed && op == "cancel", st == model.Canceled && op == "commit":
		return ratelimit.Result{}, fmt.Errorf("%w: %s of reservation %q on %q, which was settled the other way first", ratelimit.ErrSettled, op, r.ID, r.key)
	}
	rep.Granted, rep.Allowed = charged, op == "cancel" || charged == int64(n)
	return result(rep, r.rule), nil
}

// modelCall is a call's state keys and limits on the model, and the name
// of its rule's record of reservations: as on Redis, a Limit's and a
// Policy's of that one limit are two.
func modelCall(key string, r ratelimit.Rule, lims []ratelimit.Limit) ([]string, []model.Limit, string) {
	keys, mlims := make([]string, len(lims)), make([]model.Limit, len(lims))
	for i, lim := range lims {
		keys[i], mlims[i] = stateKey(key, lim), modelLimit(lim)
	}
	rule := "L"
	if _, ok := r.(ratelimit.Policy); ok {
		rule = "P"
	}
	return keys, mlims, "rsv:" + rule + strings.Join(keys, ",")
}
