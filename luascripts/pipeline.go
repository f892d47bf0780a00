package luascripts

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Queue adds the script to p as EVALSHA (EVALSHA_RO for a read-only script)
// and returns its command, to be read after p.Exec.
func (s *Script) Queue(ctx context.Context, p redis.Pipeliner, keys []string, args ...any) *redis.Cmd {
	if s.readOnly {
		return p.EvalShaRO(ctx, s.sha, keys, args...)
	}
	return p.EvalSha(ctx, s.sha, keys, args...)
}

// queueSource adds the script to p as EVAL (EVAL_RO for a read-only script).
func (s *Script) queueSource(ctx context.Context, p redis.Pipeliner, keys []string, args ...any) *redis.Cmd {
	if s.readOnly {
		return p.EvalRO(ctx, s.src, keys, args...)
	}
	return p.Eval(ctx, s.src, keys, args...)
}

// RunPipelined runs the script at the head of a pipeline that newPipeline
// returns, followed by the commands then queues (WAIT, say, which must
// share the script's connection), and returns the script's command. It
// sends EVALSHA first; if the server answers NOSCRIPT, the script did not
// run, and the whole pipeline is sent once more, in a new pipeline, with
// EVAL, so then is called again and its commands of the first attempt are
// to be discarded. Errors are read per command, as after p.Exec.
func (s *Script) RunPipelined(ctx context.Context, newPipeline func() redis.Pipeliner, keys []string, args []any, then func(redis.Pipeliner)) *redis.Cmd {
	p := newPipeline()
	cmd := s.Queue(ctx, p, keys, args...)
	then(p)
	_, _ = p.Exec(ctx) // errors are read per command
	if isNoScript(cmd.Err()) {
		p = newPipeline()
		cmd = s.queueSource(ctx, p, keys, args...)
		then(p)
		_, _ = p.Exec(ctx)
	}
	if err := CheckVersion(cmd.Err()); err != cmd.Err() {
		cmd.SetErr(err)
	}
	return cmd
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
// its Cmd, wrapped with ErrRedisTooOld as Run's are.
func RunBatch(ctx context.Context, newPipeline func() redis.Pipeliner, calls []Call) {
	p := newPipeline()
	for i := range calls {
		c := &calls[i]
		c.Cmd = c.Script.Queue(ctx, p, c.Keys, c.Args...)
	}
	_, _ = p.Exec(ctx) // errors are read per command
	var again redis.Pipeliner
	for i := range calls {
		c := &calls[i]
		if !isNoScript(c.Cmd.Err()) {
			continue
		}
		if again == nil {
			again = newPipeline()
		}
		c.Cmd = c.Script.queueSource(ctx, again, c.Keys, c.Args...)
	}
	if again != nil {
		_, _ = again.Exec(ctx)
	}
	for i := range calls {
		if err := CheckVersion(calls[i].Cmd.Err()); err != calls[i].Cmd.Err() {
			calls[i].Cmd.SetErr(err)
		}
	}
}
