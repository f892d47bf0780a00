package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis-primitives/go/examples/internal/promtel"
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
	r := refusedSlowRun(t, got)
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

// An operator could not see the stale write fencing refused, nor a leader
// change seen from a node that never led. /metrics after the scripted
// handover: the stopped leader's node counts one postgresql write refused
// as stale; every node that did not lead counts two leader changes (the
// first leader's term, then its successor's); the gauge of leaders is back
// to 0 once the nodes stopped.
func TestMetricsShowTheRefusedStaleWriteAndLeaderChangesSeenByANodeThatNeverLed(t *testing.T) {
	s := redistest.Start(t)
	metrics := promtel.New()
	t.Cleanup(func() { _ = metrics.Shutdown(context.Background()) })
	cfg := config{
		redisAddr: s.Addr(), dsn: pgtest.NewDatabase(t), prefix: s.Prefix(),
		nodes: 3, every: 100 * time.Millisecond, runFor: 1600 * time.Millisecond, lease: time.Second,
		slow: 600 * time.Millisecond, metrics: metrics,
	}
	var out bytes.Buffer
	got, err := run(context.Background(), cfg, &out)
	t.Logf("output:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	if got.stopped == "" {
		t.Fatalf("no scripted handover: refused %+v", got.refused)
	}
	refusedSlowRun(t, got)
	rec := httptest.NewRecorder()
	metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	page := rec.Body.String()
	scrape, err := promtel.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text: %v\n%s", err, page)
	}
	stale := map[string]string{"fence_store": "postgresql", "fence_outcome": "stale"}
	if n, _ := scrape.Sum("fence_writes_total", stale); int(n) != len(got.refused) {
		t.Errorf("fence_writes_total%v = %v, want %d (the refused runs)", stale, n, len(got.refused))
	}
	stale["service_instance_id"] = got.stopped
	if n, _ := scrape.Sum("fence_writes_total", stale); int(n) != len(got.refused) {
		t.Errorf("fence_writes_total%v = %v, want %d: the refused writes are the stopped leader's", stale, n, len(got.refused))
	}
	accepted := map[string]string{"fence_store": "postgresql", "fence_outcome": "accepted"}
	if n, _ := scrape.Sum("fence_writes_total", accepted); int(n) < len(got.runs) {
		t.Errorf("fence_writes_total%v = %v, want at least the %d runs recorded", accepted, n, len(got.runs))
	}
	transitions := func(node, transition string) float64 {
		n, _ := scrape.Sum("election_transitions_total", map[string]string{
			"service_instance_id": node, "election_name": got.job, "election_transition": transition,
		})
		return n
	}
	neverLed := 0
	for i := range cfg.nodes {
		node := fmt.Sprintf("node-%d", i+1)
		if node == got.stopped || transitions(node, "elected") > 0 {
			continue
		}
		neverLed++
		if n := transitions(node, "leader_changed"); n != 2 {
			t.Errorf("%s, which never led: leader_changed = %v, want 2 (the first leader, then the next)", node, n)
		}
	}
	if neverLed == 0 {
		t.Fatalf("every node led; the test needs one that never did\n%s", out.String())
	}
	if n, found := scrape.Sum("election_leader", map[string]string{"election_name": got.job}); !found || n != 0 {
		t.Errorf("election_leader = %v (found %v) after every node stopped, want 0", n, found)
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", page)
	}
}

// refusedSlowRun checks the runs Guard refused and returns the slow one's
// refusal. The slow run, in flight when its leader was stopped, must be
// refused. So may the stopped leader's ordinary runs fired just before the
// stop, when the machine is so loaded that their writes come after the new
// leader's (once, under -race with two busy cores, a run of 10 ms took
// 1.2 s to write): each refusal must be the stopped leader's, of its
// older epoch, of a slot fired no later than the slow one.
func refusedSlowRun(t *testing.T, got outcome) refusal {
	t.Helper()
	var slow *refusal
	for i, r := range got.refused {
		if r.node != got.stopped || r.epoch >= r.highest || r.slot.After(got.slowSlot) {
			t.Errorf("refused run %+v: want the stopped leader's (%s), with an epoch below the highest, fired no later than its slow run (%v)",
				r, got.stopped, got.slowSlot)
		}
		if r.slot.Equal(got.slowSlot) {
			slow = &got.refused[i]
		}
	}
	if slow == nil {
		t.Fatalf("refused runs %+v: the slow run (slot %v) is not among them", got.refused, got.slowSlot)
	}
	if n := len(got.refused) - 1; n > 0 {
		t.Logf("%d ordinary runs of the stopped leader were also refused: their writes came after the new leader's", n)
	}
	return *slow
}
