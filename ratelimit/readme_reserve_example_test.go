package ratelimit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
)

// complete is the README's reserve-then-commit snippet, word for word
// (examples/snippets_test.go checks it).
func complete(ctx context.Context, limiter *ratelimit.Limiter, tenant, prompt string, maxTokens int) error {
	rs, err := limiter.Reserve(ctx, "tenant:"+tenant, ratelimit.GCRA(100_000, time.Minute, 100_000), maxTokens, time.Minute)
	if err != nil {
		return err
	}
	if !rs.Result.Allowed {
		return fmt.Errorf("tenant %s is over its token budget; retry in %v", tenant, rs.Result.RetryAfter)
	}
	used := callModel(ctx, prompt, maxTokens)
	_, err = rs.Commit(ctx, used) // retried after an error, it charges once
	return err
}

// callModel stands in for an LLM call that reports the tokens it used.
func callModel(_ context.Context, _ string, maxTokens int) int {
	calledModel++
	return maxTokens / 3
}

var calledModel int // how many times complete ran the work

// An earlier version of the snippet returned err, nil, when the tenant was
// over budget: a caller copying it reported success for work it never
// ran. Each branch of the snippet is taken here.
func TestTheReadmesReserveSnippetReportsAnOverBudgetTenantAsAnError(t *testing.T) {
	_, l := limiter(t, redistest.Start(t))
	ctx := context.Background()
	calledModel = 0
	if err := complete(ctx, l, "a", "prompt", 60_000); err != nil {
		t.Fatalf("a reservation within the budget: %v", err)
	}
	// 60,000 reserved, 20,000 charged: 80,000 left; 90,000 does not fit.
	err := complete(ctx, l, "a", "prompt", 90_000)
	if err == nil || !strings.Contains(err.Error(), "over its token budget") {
		t.Fatalf("a reservation over the budget returned %v, want the over-budget error", err)
	}
	if calledModel != 1 {
		t.Fatalf("the model ran %d times, want once (not for the refused reservation)", calledModel)
	}
	if err := complete(ctx, l, "a", "prompt", 0); err == nil {
		t.Fatal("a reservation of 0 tokens: no error")
	}
	t.Logf("over budget: %v", err)
}
