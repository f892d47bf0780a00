package leasecore

import (
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

// Options are the options every primitive on the core takes. A
// primitive's config embeds them; its With… functions call the setters,
// which validate, so each rule is written once.
type Options struct {
	Errs   *Errors
	Prefix string // of every key and channel name
	Owner  string // the label stored with every grant

	margin    time.Duration
	marginSet bool
	renew     float64 // the renew interval of WithLock and WithPermit, as a fraction of the TTL

	waitMin, waitMax time.Duration
}

// Defaults returns the defaults: prefix, a random owner, the margin
// TTL/100 + 2ms, renewals every third of the TTL, and a wait backoff of
// 25ms doubling to 1s.
func Defaults(errs *Errors, prefix string) Options {
	return Options{
		Errs: errs, Prefix: prefix, Owner: RandomHex(8),
		renew: 1.0 / 3, waitMin: 25 * time.Millisecond, waitMax: time.Second,
	}
}

// SetPrefix sets the prefix, which must be non-empty and contain no '{' or
// '}': either would move the hash tag the keys of one name share.
func (o *Options) SetPrefix(prefix string) error {
	if prefix == "" || strings.ContainsAny(prefix, "{}") {
		return o.Errs.Invalid("prefix %q must be non-empty and contain no braces", prefix)
	}
	o.Prefix = prefix
	return nil
}

// SetOwner sets the owner label, which must not be empty.
func (o *Options) SetOwner(owner string) error {
	if owner == "" {
		return o.Errs.Invalid("empty owner")
	}
	o.Owner = owner
	return nil
}

// SetMargin sets the safety margin, which must not be negative.
func (o *Options) SetMargin(d time.Duration) error {
	if d < 0 {
		return o.Errs.Invalid("negative safety margin %v", d)
	}
	o.margin, o.marginSet = d, true
	return nil
}

// SetRenew sets the renew fraction, in (0, 1).
func (o *Options) SetRenew(f float64) error {
	if !(f > 0 && f < 1) {
		return o.Errs.Invalid("renew fraction %v not in (0, 1)", f)
	}
	o.renew = f
	return nil
}

// SetBackoff sets the wait's fallback delays: 0 < min ≤ max.
func (o *Options) SetBackoff(min, max time.Duration) error {
	if min <= 0 || max < min {
		return o.Errs.Invalid("wait backoff %v..%v", min, max)
	}
	o.waitMin, o.waitMax = min, max
	return nil
}

// Channel returns the release channel of name, "P{N}:released", on which
// a primitive's release script publishes.
func (o *Options) Channel(name string) string { return o.Prefix + "{" + name + "}:released" }

// Margin returns the safety margin for a lease of ttl.
func (o *Options) Margin(ttl time.Duration) time.Duration {
	if o.marginSet {
		return o.margin
	}
	return ttl/100 + 2*time.Millisecond
}

// CheckTTL is the one TTL floor: it rejects a TTL Redis cannot express
// (under a millisecond) and one that leaves no time once the safety margin
// is taken off (the deadline would be no later than the request), and
// truncates to whole milliseconds, so a lease never claims more time than
// the server gives.
func (o *Options) CheckTTL(ttl time.Duration) (time.Duration, error) {
	if ttl < time.Millisecond {
		return 0, fmt.Errorf("%w: %v (want ≥ 1ms)", o.Errs.InvalidTTL, ttl)
	}
	ttl = ttl.Truncate(time.Millisecond)
	if margin := o.Margin(ttl); ttl <= margin {
		return 0, fmt.Errorf("%w: %v leaves no time once the safety margin %v is taken off", o.Errs.InvalidTTL, ttl, margin)
	}
	return ttl, nil
}

// RenewInterval returns the renew interval of a lease of ttl held for one
// function call (WithLock, WithPermit), or ErrInvalidTTL when it leaves no
// chance to renew before the deadline.
func (o *Options) RenewInterval(ttl time.Duration) (time.Duration, error) {
	interval := time.Duration(float64(ttl) * o.renew)
	return interval, o.Errs.checkInterval(ttl, interval, o.Margin(ttl))
}

// backoff returns the fallback delay after d: doubled, up to the maximum.
func (o *Options) backoff(d time.Duration) time.Duration {
	if d > o.waitMax/2 { // doubling would pass the max, or overflow
		return o.waitMax
	}
	return 2 * d
}

// jittered returns a delay in [d/2, d], at least a millisecond, so that
// waiters that missed the same notification do not retry in step.
func jittered(d time.Duration) time.Duration {
	return max(d/2+rand.N(d/2+1), time.Millisecond)
}

// RandomHex returns n random bytes in hex: an acquisition's id, and the
// default owner label.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = crand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// Configure is the start of a primitive's New: it refuses a nil client
// (Errs.NilClient) and a nil option (Errs.InvalidOption), and applies
// opts to cfg in order, returning the first option's error.
func Configure[C any, O ~func(*C) error](errs *Errors, client luascripts.Client, cfg *C, opts []O) error {
	if luascripts.IsNil(client) {
		return errs.NilClient
	}
	for _, opt := range opts {
		if opt == nil {
			return errs.Invalid("nil option")
		}
		if err := opt(cfg); err != nil {
			return err
		}
	}
	return nil
}
