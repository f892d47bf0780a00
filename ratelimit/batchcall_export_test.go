package ratelimit

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// BatchSHA is batch.lua's digest, for tests that tell its calls apart.
var BatchSHA = batchScript.SHA1()

// LoadBatchScript loads batch.lua into c's server, so that a test's first
// batch is not answered NOSCRIPT and sent again.
func LoadBatchScript(ctx context.Context, c redis.Scripter) error {
	return c.ScriptLoad(ctx, batchScript.Source()).Err()
}
