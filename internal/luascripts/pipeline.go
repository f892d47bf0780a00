package luascripts

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// queue adds the script to p and returns its command, to be read after
// p.Exec and settle: a script that writes is sent at most once (once.go),
// a read-only or idempotent one as a plain command. source sends the text
// (EVAL) instead of the SHA1.
func (s *Script) queue(ctx context.Context, p redis.Pipeliner, source bool, keys []string, args []any) (*redis.Cmd, *onceArg) {
	switch {
	case !s.retried:
		return s.queueOnce(ctx, p, source, keys, args)
	case s.readOnly && source:
		return p.EvalRO(ctx, s.src, keys, args...), nil
	case s.readOnly:
		return p.EvalShaRO(ctx, s.sha, keys, args...), nil
	case source:
		return p.Eval(ctx, s.src, keys, args...), nil
	}
	return p.EvalSha(ctx, s.sha, keys, args...), nil
}

// settle completes a command queue returned, after p.Exec.
func settle(o *onceArg) {
	if o != nil {
		o.settle()
	}
}

// RunPipelined runs the script at the head of a pipeline that newPipeline
// returns, followed by the commands then queues (WAIT, say, which must
// share the script's connection; then may be nil), and returns the
// script's command. It sends EVALSHA first; if the server answers
// NOSCRIPT, the script did not run, and the whole pipeline is sent once
// more, in a new pipeline, with EVAL, so then is called again and its
// commands of the first attempt are to be discarded. Errors are read per
// command, as after p.Exec. A script that writes runs at most once, and a
// migration's refusal is retried, as with Run.
func (s *Script) RunPipelined(ctx context.Context, newPipeline func() redis.Pipeliner, keys []string, args []any, then func(redis.Pipeliner)) *redis.Cmd {
	cmd := untilMigrated(ctx, func() *redis.Cmd {
		var cmd *redis.Cmd
		for _, source := range []bool{false, true} {
			p := newPipeline()
			c, o := s.queue(ctx, p, source, keys, args)
			if then != nil {
				then(p)
			}
			failed(p.Exec(ctx))(c)
			settle(o)
			if cmd = c; !isNoScript(cmd.Err()) {
				break
			}
		}
		return cmd
	})
	if err := deadlineError(ctx, CheckVersion(cmd.Err())); err != cmd.Err() {
		cmd.SetErr(err)
	}
	return cmd
}

// failed returns what marks a command of a pipeline whose Exec returned
// err as failed with it, if the pipeline never got to it: errors are read
// per command, and an older go-redis (v9.7) leaves a command it did not
// send (a context already done) with neither a reply nor an error.
func failed(_ []redis.Cmder, err error) func(*redis.Cmd) {
	return func(c *redis.Cmd) {
		if err != nil && c.Err() == nil && c.Val() == nil {
			c.SetErr(err)
		}
	}
}

// deadlineError returns err wrapped with context.DeadlineExceeded when it
// is a socket timeout at or past ctx's deadline: with
// ContextTimeoutEnabled the socket's deadline is the context's, and may
// fire a moment before the context says so. A pipeline reports the socket's
// error; a call past its deadline reports the deadline.
func deadlineError(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
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

// A Call is one script call of a batch that RunBatch sends.
type Call struct {
	Script *Script
	Keys   []string
	Args   []any
	Cmd    *redis.Cmd // the reply, set by RunBatch
}

// RunBatch sends calls in one pipeline that newPipeline returns, each as
// EVALSHA (EVALSHA_RO for a read-only script). The calls the server
// answers NOSCRIPT did not run; they go once more, in a second pipeline,
// with their source, after the others. Each call's reply and error are in
// its Cmd, wrapped with ErrRedisTooOld as Run's are. A call of a script
// that writes runs at most once, and a migration's refusal is retried, as
// with Run.
func RunBatch(ctx context.Context, newPipeline func() redis.Pipeliner, calls []Call) {
	// A node's part of a batch: the Batcher sends the calls a migration
	// refused again itself (bynode.go).
	runBatch(ctx, newPipeline, calls, ctx.Value(nodeBatchKey{}) == nil)
}

// runBatch is RunBatch, and SendBatch without retry: every call, then
// again those a migrating slot refused (they did not run), until none is
// or the batch's time is up.
func runBatch(ctx context.Context, newPipeline func() redis.Pipeliner, calls []Call, retry bool) {
	round := make([]bool, len(calls))
	for i := range round {
		round[i] = true
	}
	var wait *pauses
	for {
		sendRound(ctx, newPipeline, calls, func(i int) bool { return round[i] }, false)
		sendRound(ctx, newPipeline, calls, func(i int) bool { return round[i] && isNoScript(calls[i].Cmd.Err()) }, true)
		again := false
		for i := range calls {
			round[i] = migrating(calls[i].Cmd.Err())
			again = again || round[i]
		}
		if !again || !retry {
			break
		}
		if wait == nil {
			wait = newPauses(ctx)
		}
		if !wait.next() {
			break
		}
	}
	for i := range calls {
		if err := CheckVersion(calls[i].Cmd.Err()); err != calls[i].Cmd.Err() {
			calls[i].Cmd.SetErr(err)
		}
	}
}
