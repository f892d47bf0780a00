package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis-primitives/go/fence/pgfence"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/internal/redistest/pgtest"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

func testConfig(t *testing.T, unfenced bool) config {
	s := redistest.Start(t)
	return config{
		redisAddr: s.Addr(), dsn: pgtest.NewDatabase(t), prefix: s.Prefix(),
		lease: 200 * time.Millisecond, slow: 500 * time.Millisecond, unfenced: unfenced,
	}
}

func TestStaleWorkersChargeIsRefusedAndTheInvoiceIsChargedOnce(t *testing.T) {
	var out bytes.Buffer
	got, err := run(context.Background(), testConfig(t, false), &out)
	t.Logf("output:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	var stale *pgfence.StaleError
	if !errors.As(got.worker1, &stale) {
		t.Fatalf("worker 1's commit: %v, want a *pgfence.StaleError", got.worker1)
	}
	if stale.Token != got.tokens["worker-1"] || stale.Highest != got.tokens["worker-2"] || stale.Token >= stale.Highest {
		t.Errorf("refusal says token %d < %d; worker tokens %v", stale.Token, stale.Highest, got.tokens)
	}
	if got.worker2 != nil || !got.committed["worker-2"] || got.committed["worker-1"] {
		t.Errorf("worker 2: %v, committed %v", got.worker2, got.committed)
	}
	if len(got.charges) != 1 || got.charges[0].worker != "worker-2" {
		t.Fatalf("charges %+v, want exactly one, by worker-2", got.charges)
	}
	if got.balance != got.opening-got.charges[0].amount {
		t.Errorf("balance %d, want %d - %d", got.balance, got.opening, got.charges[0].amount)
	}
	if !strings.Contains(out.String(), "commit REFUSED") || !strings.Contains(out.String(), "charged once") {
		t.Error("the output does not tell the refusal and the single charge")
	}
}

// The same two workers without Guard: the failure the fence exists for.
func TestWithoutGuardTheStaleWorkerChargesTheInvoiceTwice(t *testing.T) {
	var out bytes.Buffer
	got, err := run(context.Background(), testConfig(t, true), &out)
	t.Logf("output:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	if got.worker1 != nil || got.worker2 != nil {
		t.Fatalf("commits: %v, %v; both should go through unfenced", got.worker1, got.worker2)
	}
	if len(got.charges) != 2 || got.balance != got.opening-2*got.charges[0].amount {
		t.Fatalf("charges %+v, balance %d: want the invoice charged twice", got.charges, got.balance)
	}
	if !strings.Contains(out.String(), "CHARGED 2 TIMES") {
		t.Error("the output does not tell the double charge")
	}
}
