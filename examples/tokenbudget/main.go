// Command tokenbudget limits an LLM-style workload by tokens per minute per
// tenant, with reserve-then-commit (ratelimit.Reserve): each completion
// reserves the most it may cost (prompt plus max_tokens), runs, then
// commits the tokens it actually used and gives the rest back. Beside it,
// the same traffic charged its estimate up front (AllowN, nothing given
// back), and a worker that crashes mid-completion: its reservation comes
// back when its ttl ends, on the server's clock.
//
//	cd examples && go run ./tokenbudget
//
// It starts its own redis-server unless REDIS_ADDR names one.
package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/examples/internal/servers"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/ratelimit"
)

// config is one run's: where Redis is, the key prefix, and the workload.
type config struct {
	redisAddr, prefix string
	tokensPerMinute   int           // each tenant's budget
	requests          int           // completions each tenant attempts, back to back
	maxTokens         int           // what each reserves
	crashTTL          time.Duration // the crashing worker's reservation ttl
}

// summary is what a run measured, for the test.
type summary struct {
	estimateAdmitted, reserveAdmitted int   // completions admitted each way
	reserved, used                    int   // tokens, reserve-then-commit
	crashHeld, crashBack              bool  // the crashed reservation held, then came back
	crashBackAfter                    int64 // ms after its expiry
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	addr, _, stopRedis, err := servers.Redis()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tokenbudget:", err)
		os.Exit(1)
	}
	defer stopRedis()
	cfg := config{redisAddr: addr, prefix: fmt.Sprintf("tokenbudget:%d:", time.Now().UnixNano()),
		tokensPerMinute: 20_000, requests: 40, maxTokens: 2_000, crashTTL: time.Second}
	if _, err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "tokenbudget:", err)
		os.Exit(1)
	}
}

// complete stands in for an LLM call: it uses between a tenth and a half
// of max tokens, as completions mostly stop well before their cap.
func complete(rng *rand.Rand, maxTokens int) int {
	return maxTokens/10 + rng.IntN(maxTokens*4/10)
}

func run(ctx context.Context, cfg config, out io.Writer) (summary, error) {
	var sum summary
	c := redis.NewClient(&redis.Options{Addr: cfg.redisAddr, ContextTimeoutEnabled: true})
	defer c.Close()
	l, err := ratelimit.New(goredisadapter.New(c), ratelimit.WithPrefix(cfg.prefix))
	if err != nil {
		return sum, err
	}
	budget := ratelimit.GCRA(cfg.tokensPerMinute, time.Minute, cfg.tokensPerMinute).Named("tokens-per-minute")
	rng := rand.New(rand.NewPCG(1, 2))
	fmt.Fprintf(out, "budget %d tokens per minute per tenant; %d completions of up to %d tokens each, back to back\n\n",
		cfg.tokensPerMinute, cfg.requests, cfg.maxTokens)

	// Charging the estimate: every completion pays max tokens.
	for range cfg.requests {
		res, err := l.AllowN(ctx, "tenant:estimate", budget, cfg.maxTokens)
		if err != nil {
			return sum, err
		}
		if res.Allowed {
			sum.estimateAdmitted++
			complete(rng, cfg.maxTokens)
		}
	}
	fmt.Fprintf(out, "charge the estimate (AllowN %d):   %2d completions admitted\n", cfg.maxTokens, sum.estimateAdmitted)

	// Reserve, complete, commit what was used.
	for range cfg.requests {
		rs, err := l.Reserve(ctx, "tenant:reserve", budget, cfg.maxTokens, 30*time.Second)
		if err != nil {
			return sum, err
		}
		if !rs.Result.Allowed {
			continue
		}
		used := complete(rng, cfg.maxTokens)
		if _, err := rs.Commit(ctx, used); err != nil {
			return sum, err
		}
		sum.reserveAdmitted++
		sum.reserved += cfg.maxTokens
		sum.used += used
	}
	fmt.Fprintf(out, "reserve %d, commit the actual:     %2d completions admitted, %d tokens used of %d reserved\n\n",
		cfg.maxTokens, sum.reserveAdmitted, sum.used, sum.reserved)

	// A worker reserves the whole budget and dies before it commits.
	crash, err := l.Reserve(ctx, "tenant:crash", budget, cfg.tokensPerMinute, cfg.crashTTL)
	if err != nil || !crash.Result.Allowed {
		return sum, fmt.Errorf("the crashing worker's reservation: %+v %v", crash, err)
	}
	fmt.Fprintf(out, "a worker reserved all %d tokens for %v and crashed before it committed\n", cfg.tokensPerMinute, cfg.crashTTL)
	probe, err := l.Reserve(ctx, "tenant:crash", budget, cfg.maxTokens, time.Second)
	if err != nil {
		return sum, err
	}
	sum.crashHeld = !probe.Result.Allowed
	fmt.Fprintf(out, "  at once:               another completion is refused (retry after %v)\n", probe.Result.RetryAfter)
	deadline := crash.Expires.Add(cfg.crashTTL + 5*time.Second)
	for time.Now().Before(deadline) {
		probe, err := l.Reserve(ctx, "tenant:crash", budget, cfg.maxTokens, time.Second)
		if err != nil {
			return sum, err
		}
		if probe.Result.Allowed {
			sum.crashBack, sum.crashBackAfter = true, probe.At.Sub(crash.Expires).Milliseconds()
			fmt.Fprintf(out, "  %3d ms after its ttl:  the budget is back (%d tokens left after a new reservation)\n",
				sum.crashBackAfter, probe.Result.Remaining)
			_, err := probe.Cancel(ctx)
			return sum, err
		}
		select {
		case <-ctx.Done():
			return sum, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return sum, fmt.Errorf("the crashed worker's reservation was not given back within %v of its expiry", cfg.crashTTL+5*time.Second)
}
