package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/internal/redistest/pgtest"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

func TestSlowRunOfTheStoppedLeadersTermIsRefusedAfterTheNewLeaderWrote(t *testing.T) {
	s := redistest.Start(t)
	cfg := config{
		redisAddr: s.Addr(), dsn: pgtest.NewDatabase(t), prefix: s.Prefix(),
		nodes: 3, every: 100 * time.Millisecond, runFor: 1600 * time.Millisecond, lease: time.Second,
		slow: 600 * time.Millisecond,
	}
	var out bytes.Buffer
	got, err := run(context.Background(), cfg, &out)
	t.Logf("output:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	if got.stopped == "" || got.handover <= 0 {
		t.Fatalf("no scripted handover: stopped %q, handover %v", got.stopped, got.handover)
	}
	// The stopped leader released its lease: the next one did not wait for it to expire.
	if got.handover >= cfg.lease/2 {
		t.Errorf("handover took %v, want far less than the %v lease", got.handover, cfg.lease)
	}
	if len(got.refused) != 1 {
		t.Fatalf("refused runs %+v, want exactly the slow one", got.refused)
	}
	r := got.refused[0]
	if r.node != got.stopped || r.epoch >= r.highest {
		t.Errorf("refused run %+v: want the stopped leader's (%s), with an epoch below the highest", r, got.stopped)
	}
	epochs := map[int64]bool{}
	slots := map[time.Time]bool{}
	for _, run := range got.runs {
		epochs[run.epoch] = true
		if slots[run.slot] {
			t.Errorf("slot %v recorded twice", run.slot)
		}
		slots[run.slot] = true
		if run.slot.Equal(r.slot) {
			t.Errorf("the refused run's slot %v was recorded: %+v", r.slot, run)
		}
		if run.epoch > r.epoch && run.node == got.stopped {
			t.Errorf("the stopped node recorded a run of a later epoch: %+v", run)
		}
	}
	if len(epochs) < 2 || len(got.runs) < 6 {
		t.Errorf("%d runs over %d epochs; want runs from before and after the handover", len(got.runs), len(epochs))
	}
}
