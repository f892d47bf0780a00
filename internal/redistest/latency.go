package redistest

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Latency returns a client hook that delays every command and pipeline by
// d before sending it, as a network between the caller and Redis would.
// Loopback answers in tens of microseconds, fast enough that on two busy
// cores one caller's round trips can all finish before another caller is
// scheduled; races between callers that a LAN's round trip opens then do
// not show. Add it with client.AddHook.
func Latency(d time.Duration) redis.Hook { return latency(d) }

type latency time.Duration

func (latency) DialHook(next redis.DialHook) redis.DialHook { return next }

func (d latency) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		time.Sleep(time.Duration(d))
		return next(ctx, cmd)
	}
}

func (d latency) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		time.Sleep(time.Duration(d))
		return next(ctx, cmds)
	}
}
