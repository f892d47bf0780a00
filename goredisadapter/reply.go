package goredisadapter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/luascripts"
)

// outcome reads a script's command of a pipeline whose Exec returned
// execErr as the contract gives it: a null reply as nil, RESP3's booleans
// as RESP2 gives them (true 1, false null), errors by convertErr.
func outcome(ctx context.Context, cmd *redis.Cmd, execErr error) (any, error) {
	err := cmd.Err()
	if err == nil && execErr != nil && cmd.Val() == nil {
		// An older go-redis (v9.7) leaves a command it never sent (a
		// context already done) with neither a reply nor an error.
		err = execErr
	}
	switch {
	case err == redis.Nil:
		return nil, nil
	case err != nil:
		return nil, convertErr(ctx, err)
	}
	return resp2(cmd.Val()), nil
}

// resp2 turns the reply types only RESP3 has into RESP2's, which the
// scripts' callers read: a Lua true is 1 and a Lua false null on either.
func resp2(v any) any {
	switch v := v.(type) {
	case bool:
		if v {
			return int64(1)
		}
		return nil
	case []any:
		for i := range v {
			v[i] = resp2(v[i])
		}
	}
	return v
}

// convertErr gives err the contract's shape: an error reply as a
// *luascripts.ReplyError around go-redis's (which still matches
// redis.Error), a closed client as luascripts.ErrClosed, and a socket
// timeout at ctx's deadline as context.DeadlineExceeded.
func convertErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var re redis.Error
	switch {
	case errors.Is(err, luascripts.ErrReplyLost):
		return deadline(ctx, err)
	case errors.As(err, &re):
		return &luascripts.ReplyError{Message: re.Error(), Err: err}
	case errors.Is(err, redis.ErrClosed):
		return fmt.Errorf("%w: %w", luascripts.ErrClosed, err)
	}
	return deadline(ctx, err)
}

// deadline returns err wrapped with context.DeadlineExceeded when it is a
// socket timeout at or past ctx's deadline: with ContextTimeoutEnabled the
// socket's deadline is the context's, and may fire a moment before the
// context says so. A call past its deadline reports the deadline.
func deadline(ctx context.Context, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if ne := net.Error(nil); !errors.As(err, &ne) || !ne.Timeout() {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	}
	return err
}

// moved reports whether err is a MOVED or ASK redirect.
func moved(err error) bool {
	msg, ok := luascripts.ReplyMessage(err)
	return ok && (strings.HasPrefix(msg, "MOVED ") || strings.HasPrefix(msg, "ASK "))
}
