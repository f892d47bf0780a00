package luascripts

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// While Redis Cluster moves a slot to another node (resharding), the
// slot's keys move one at a time. A script on several keys of the slot is
// refused with TRYAGAIN while they sit on two nodes, and a node that has
// just lost or gained the slot answers MOVED or ASK, which go-redis follows
// only a few times (MaxRedirects) within microseconds: a migration outlasts
// that, and the call failed. Each of these refusals proves the script did
// not run, so the runner sends it again, after a pause that doubles from
// 1 ms to 32 ms, until it runs, its context ends, or migrationWait passes
// for a context without a deadline.

// migrationWait bounds the retries of a call whose context has no
// deadline.
const migrationWait = 2 * time.Second

// migrating reports whether err is a Cluster's refusal during a slot's
// migration: the script did not run.
func migrating(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	msg := re.Error()
	return strings.HasPrefix(msg, "TRYAGAIN") || strings.HasPrefix(msg, "MOVED ") || strings.HasPrefix(msg, "ASK ")
}

// untilMigrated calls send, and again while its reply is a migration's
// refusal (see above).
func untilMigrated(ctx context.Context, send func() *redis.Cmd) *redis.Cmd {
	cmd := send()
	if !migrating(cmd.Err()) {
		return cmd
	}
	for wait := newPauses(ctx); migrating(cmd.Err()) && wait.next(); {
		cmd = send()
	}
	return cmd
}

// pauses are the waits between the sends of a call refused by a migrating
// slot.
type pauses struct {
	ctx   context.Context
	end   time.Time
	pause time.Duration
}

func newPauses(ctx context.Context) *pauses {
	end, ok := ctx.Deadline()
	if !ok {
		end = time.Now().Add(migrationWait)
	}
	return &pauses{ctx: ctx, end: end, pause: time.Millisecond}
}

// next waits for the next send, and reports false instead when the call's
// time is up.
func (p *pauses) next() bool {
	if time.Until(p.end) < p.pause {
		return false
	}
	t := time.NewTimer(p.pause)
	defer t.Stop()
	select {
	case <-p.ctx.Done():
		return false
	case <-t.C:
	}
	p.pause = min(2*p.pause, 32*time.Millisecond)
	return true
}
