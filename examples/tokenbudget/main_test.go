package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

// Charging the estimate admits budget/maxTokens completions; reserving and
// committing the actual admits as many as the used tokens allow, and a
// crashed worker's reservation comes back by its ttl.
func TestReserveThenCommitAdmitsMoreThanChargingTheEstimateAndACrashGivesBackByTheTTL(t *testing.T) {
	s := redistest.Start(t)
	cfg := config{redisAddr: s.Addr(), prefix: s.Prefix(), tokensPerMinute: 20_000, requests: 40, maxTokens: 2_000, crashTTL: 500 * time.Millisecond}
	var out bytes.Buffer
	got, err := run(context.Background(), cfg, &out)
	t.Logf("output:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	// 20000/2000 = 10 up front, plus the refill of a few hundred tokens a second.
	if got.estimateAdmitted < 10 || got.estimateAdmitted > 11 {
		t.Errorf("charging the estimate admitted %d, want 10 (or 11 with the refill)", got.estimateAdmitted)
	}
	// Completions use 10% to 50% of their cap: at least twice as many fit.
	if got.reserveAdmitted < 2*got.estimateAdmitted {
		t.Errorf("reserve-then-commit admitted %d, not twice the %d of charging the estimate", got.reserveAdmitted, got.estimateAdmitted)
	}
	if got.used > cfg.tokensPerMinute+cfg.maxTokens {
		t.Errorf("%d tokens used under a budget of %d", got.used, cfg.tokensPerMinute)
	}
	if !got.crashHeld || !got.crashBack || got.crashBackAfter < 0 {
		t.Errorf("crashed reservation: held %v, back %v, %d ms after its expiry", got.crashHeld, got.crashBack, got.crashBackAfter)
	}
}
