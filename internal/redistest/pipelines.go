package redistest

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// PipelineCount is a go-redis hook (client.AddHook) that counts the
// pipelines a client sends and the commands in them: what a primitive's
// batches became on the wire.
type PipelineCount struct{ Pipelines, Cmds atomic.Int64 }

// DialHook passes dials through.
func (h *PipelineCount) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook passes single commands through, uncounted.
func (h *PipelineCount) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

// ProcessPipelineHook counts each pipeline and its commands.
func (h *PipelineCount) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.Pipelines.Add(1)
		h.Cmds.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}
