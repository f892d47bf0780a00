package lock

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

//go:embed holder.lua
var holderSource string

var holderScript = luascripts.NewReadOnly("lock/holder.lua", holderSource)

// Holder reports who holds the lock called name, its token and its
// remaining TTL. It is a diagnostic: the answer may be stale by the time it
// arrives, so never decide to write on it.
func (l *Locker) Holder(ctx context.Context, name string) (Holder, error) {
	if err := l.core().CheckName(name); err != nil {
		return Holder{}, err
	}
	key := l.cfg.lockKey(name)
	res, err := holderScript.Run(ctx, l.cfg.Client, []string{key, counterKey(key)}).Slice()
	if err != nil {
		return Holder{}, errs.Call(ctx, "holder", name, err)
	}
	return decodeHolder(name, res)
}

// decodeHolder reads holder.lua's reply {token, value, pttl}.
func decodeHolder(name string, res []any) (Holder, error) {
	if len(res) != 3 {
		return Holder{}, fmt.Errorf("lock: holder %q: unexpected reply %v", name, res)
	}
	pttl, _ := res[2].(int64)
	if pttl == -2 {
		return Holder{}, nil
	}
	token, _ := res[0].(int64)
	value, _ := res[1].(string)
	return Holder{Held: true, Token: token, Owner: ownerOf(value), TTL: time.Duration(pttl) * time.Millisecond}, nil
}
