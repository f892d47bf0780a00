package rueidisadapter

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/redis/rueidis"

	"github.com/redis-primitives/go/internal/luascripts"
)

// settle sets call's outcome from r, its command's result.
func settle(ctx context.Context, call *luascripts.Call, r rueidis.RedisResult) {
	call.Reply, call.Err = outcome(ctx, !call.Script.Resendable(), r)
}

// outcome reads r, a command's result, as the contract gives it: a null
// reply as nil, an error reply as a *luascripts.ReplyError, and a failure
// without a reply by failure. once says the command is sent at most once.
func outcome(ctx context.Context, once bool, r rueidis.RedisResult) (any, error) {
	if err := r.NonRedisError(); err != nil {
		return nil, failure(ctx, once, err)
	}
	m, err := r.ToMessage()
	switch {
	case rueidis.IsRedisNil(err):
		return nil, nil
	case err != nil:
		return nil, replyError(&m, err)
	}
	return value(&m), nil
}

// failure gives err, a command's failure without a reply, the contract's
// shape:
//
//   - a refusal while connecting (WRONGPASS, NOPERM on HELLO), which
//     rueidis gives every command of the connection, is a
//     *luascripts.ReplyError;
//   - a closed client matches luascripts.ErrClosed;
//   - a command sent at most once (once) whose connection failed after it
//     may have been written matches luascripts.ErrReplyLost: rueidis did
//     not send it again, and it may have run. Not one that timed out
//     (DeadlineExceeded at its context's deadline, or at rueidis's own on
//     a dial and its handshake), which is a timeout as on any client; nor
//     one that was never written (unsent);
//   - a command past its context's end matches ctx.Err() (rueidis may
//     report the failed connection instead).
func failure(ctx context.Context, once bool, err error) error {
	var re *rueidis.RedisError
	switch {
	case errors.As(err, &re):
		return &luascripts.ReplyError{Message: withCode(re.Error()), Err: err}
	case errors.Is(err, rueidis.ErrClosing):
		return fmt.Errorf("%w: %w", luascripts.ErrClosed, err)
	}
	ctxErr := ctx.Err()
	timedOut := errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
	if once && !timedOut && !unsent(err) {
		err = fmt.Errorf("%w: %w", luascripts.ErrReplyLost, err)
	}
	if ctxErr != nil && !errors.Is(err, ctxErr) {
		err = fmt.Errorf("%w: %w", ctxErr, err)
	}
	return err
}

// unsent reports whether err proves its command was never written: the
// connection could not be made, or the Cluster has no node for its slot.
func unsent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" || errors.Is(err, rueidis.ErrNoSlot)
}
