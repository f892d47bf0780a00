package leasecore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/luascripts/keep"
)

// Errors are the sentinels a primitive built on the core returns, each
// prefixed with the primitive's name, so that errors the core makes match
// the primitive's own sentinels with errors.Is.
type Errors struct {
	NilClient     error // "lock: nil client"
	InvalidOption error // "lock: invalid option"
	InvalidName   error // "lock: invalid name"
	InvalidTTL    error // "lock: invalid ttl"
	InvalidCap    error // "semaphore: invalid capacity"
	InvalidLease  error // "lock: invalid lease"
	NotHeld       error // "lock: lease not held"
	Lost          error // "lock: lease lost"
	Deadline      error // "lock: local deadline passed without a renewal"

	pkg string
}

// NewErrors returns the sentinels of the primitive pkg, whose leases are
// called noun ("lock", "lease"; "semaphore", "permit").
func NewErrors(pkg, noun string) *Errors {
	return &Errors{
		NilClient:     errors.New(pkg + ": nil client"),
		InvalidOption: errors.New(pkg + ": invalid option"),
		InvalidName:   errors.New(pkg + ": invalid name"),
		InvalidTTL:    errors.New(pkg + ": invalid ttl"),
		InvalidCap:    errors.New(pkg + ": invalid capacity"),
		InvalidLease:  errors.New(pkg + ": invalid " + noun),
		NotHeld:       errors.New(pkg + ": " + noun + " not held"),
		Lost:          errors.New(pkg + ": " + noun + " lost"),
		Deadline:      errors.New(pkg + ": local deadline passed without a renewal"),
		pkg:           pkg,
	}
}

// Invalid returns an error matching InvalidOption, saying why.
func (e *Errors) Invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", e.InvalidOption, fmt.Sprintf(format, args...))
}

// CheckName rejects an empty name, and one that starts with '}': the keys
// "P{}…" would have an empty hash tag, which Redis ignores, and a name's
// keys would hash to different Cluster slots.
func (e *Errors) CheckName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty name", e.InvalidName)
	case strings.HasPrefix(name, "}"):
		return fmt.Errorf("%w: %q starts with '}', which would empty the keys' hash tag", e.InvalidName, name)
	}
	return nil
}

// checkCapacity rejects a capacity under 1.
func (e *Errors) checkCapacity(capacity int) error {
	if capacity < 1 {
		return fmt.Errorf("%w: %d (want ≥ 1)", e.InvalidCap, capacity)
	}
	return nil
}

// NotHeldError says that the lease of name with token is no longer held.
func (e *Errors) NotHeldError(name string, token int64) error {
	return fmt.Errorf("%w: %q (token %d)", e.NotHeld, name, token)
}

// checkInterval rejects a renew interval that leaves no chance to renew
// before the deadline, or one under keep.MinEvery.
func (e *Errors) checkInterval(ttl, interval, margin time.Duration) error {
	if interval < keep.MinEvery || interval >= ttl-margin {
		return fmt.Errorf("%w: renew interval %v must be at least %v and under the ttl %v minus the safety margin %v",
			e.InvalidTTL, interval, keep.MinEvery, ttl, margin)
	}
	return nil
}

// Call maps the error of a failed call: it names the primitive, the
// operation and the name, and joins ctx's error once ctx has ended (see
// luascripts.CallError).
func (e *Errors) Call(ctx context.Context, op, name string, err error) error {
	return luascripts.CallError(ctx, fmt.Sprintf("%s: %s %q", e.pkg, op, name), err)
}
