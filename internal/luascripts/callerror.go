package luascripts

import (
	"context"
	"errors"
	"fmt"
)

// CallError says what failed ("lock: acquire \"job\"") and wraps err, the
// call's error, joined with ctx's error once ctx has ended: a client may
// report a context deadline as an I/O timeout, which errors.Is(err,
// context.DeadlineExceeded) would otherwise miss. Every primitive maps a
// failed call's error with it, so the join is written once.
func CallError(ctx context.Context, what string, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%s: %w (%w)", what, err, cerr)
	}
	return fmt.Errorf("%s: %w", what, err)
}
