package leasecore

import (
	"context"
	"errors"
	"fmt"
)

// Hold runs fn under a lease just acquired (WithLock, WithPermit): it
// keeps the lease as r says, runs fn with the Keeper's context, and gives
// the lease back with release when fn returns, even if ctx has ended by
// then (for at most the TTL: past that the lease has expired by itself),
// and if fn panics or calls runtime.Goexit (the panic goes on up
// unchanged). name and token name the lease in a loss found at release.
//
// When the lease arrived too late to prove and the renewal that would
// have proven it failed, fn does not run and Hold returns that error
// (matching Errs.Lost). Otherwise it returns fn's error joined with the
// lease's loss while fn ran, or with the release's error, or, when the
// release found the lease gone, with an error matching Errs.Lost.
func Hold(ctx context.Context, r Renewal, name string, token int64,
	release func(context.Context) (bool, error), fn func(context.Context) error) (err error) {
	giveBack := func() (bool, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.TTL)
		defer cancel()
		return release(ctx)
	}
	k, err := Keep(ctx, r)
	if err != nil {
		_, _ = giveBack()
		return err
	}
	// One way out, however fn ends: stop renewing, give the lease back,
	// then say what became of it.
	var fnErr error
	defer func() {
		lost := k.Stop()
		released, rerr := giveBack()
		if lost == nil && rerr == nil && !released {
			lost = fmt.Errorf("%w: %q (token %d) was gone at release", r.Errs.Lost, name, token)
		}
		err = errors.Join(fnErr, lost, rerr)
	}()
	fnErr = fn(k.Context())
	return nil // replaced by the verdict above
}
