package luascripts

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// SendBatch sends calls as RunBatch does (one pipeline that newPipeline
// returns, EVALSHA each, those answered NOSCRIPT once more with their
// source; a call of a script that writes runs at most once), but once: a
// call that a migrating slot refused (TRYAGAIN, or a MOVED or ASK go-redis
// did not follow: it did not run) ends with that refusal, which Migrating
// reports, instead of being sent again until the migration ends. It is for
// a caller that has another way to send such a call: ratelimit sends a
// batch of decisions as one script call per node, and when that call is
// refused, the decisions one by one with RunBatch.
func SendBatch(ctx context.Context, newPipeline func() redis.Pipeliner, calls []Call) {
	runBatch(ctx, newPipeline, calls, false)
}

// Migrating reports whether err is a Cluster's refusal of a script call
// while its slot migrates (TRYAGAIN, MOVED, ASK): the script did not run.
func Migrating(err error) bool { return migrating(err) }

// sendRound sends the calls that pick picks in one pipeline, with their
// SHA1 or, when source is set, their text: one round of runBatch.
func sendRound(ctx context.Context, newPipeline func() redis.Pipeliner, calls []Call, pick func(i int) bool, source bool) {
	var p redis.Pipeliner
	var cmds []*redis.Cmd
	var onces []*onceArg
	for i := range calls {
		if c := &calls[i]; pick(i) {
			if p == nil {
				p, onces = newPipeline(), make([]*onceArg, 0, len(calls)-i)
			}
			var o *onceArg
			c.Cmd, o = c.Script.queue(ctx, p, source, c.Keys, c.Args)
			cmds, onces = append(cmds, c.Cmd), append(onces, o)
		}
	}
	if p == nil {
		return
	}
	unsent := failed(p.Exec(ctx))
	for i, c := range cmds {
		unsent(c)
		settle(onces[i])
	}
}
