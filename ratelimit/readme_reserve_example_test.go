package ratelimit_test

import (
	"context"
	"time"

	"github.com/redis-primitives/go/ratelimit"
)

// complete is the README's reserve-then-commit snippet, word for word
// (examples/snippets_test.go checks it).
func complete(ctx context.Context, limiter *ratelimit.Limiter, tenant, prompt string, maxTokens int) error {
	rs, err := limiter.Reserve(ctx, "tenant:"+tenant, ratelimit.GCRA(100_000, time.Minute, 100_000), maxTokens, time.Minute)
	if err != nil || !rs.Result.Allowed {
		return err // over budget: rs.Result.RetryAfter says when a reservation this size could fit
	}
	used := callModel(ctx, prompt, maxTokens)
	_, err = rs.Commit(ctx, used) // retried after an error, it charges once
	return err
}

// callModel stands in for an LLM call that reports the tokens it used.
func callModel(_ context.Context, _ string, maxTokens int) int { return maxTokens / 3 }

var _ = complete
