package robustness

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/internal/redistest/pgtest"
)

// TestEachNaiveVersionIsCaught runs the workload with one primitive
// replaced by its naive version, on one server with clients pausing past
// their leases and crashing, and requires the model of that primitive to
// report an illegal history, and porcupine's visualization of it to be
// written where the run says. A checker that passes these would pass
// anything.
func TestEachNaiveVersionIsCaught(t *testing.T) {
	dir := visualizations(t)
	for _, tc := range []struct {
		mutation Mutation
		models   []string // the models that must catch it
		visual   bool     // checked by porcupine, so a visualization is written
	}{
		{FenceAcceptsAnyToken, []string{"fence", "pgfence"}, true},
		{LockWithoutFencing, []string{"lock"}, true},
		{SemaphoreWithoutLeases, []string{"semaphore"}, true},
		{ElectionWithoutFencing, []string{"election"}, true},
		{LimiterThatDoesNotCount, []string{"ratelimit"}, false},
	} {
		t.Run(string(tc.mutation), func(t *testing.T) {
			s := redistest.Start(t, redistest.Own())
			rdb := s.Client(t)
			models := map[string]bool{}
			for _, m := range tc.models {
				models[m] = true
			}
			var pg *pgxpool.Pool
			if models["pgfence"] {
				models["lock"] = true
				var err error
				if pg, err = pgxpool.New(context.Background(), pgtest.NewDatabase(t)); err != nil {
					t.Fatal(err)
				}
				defer pg.Close()
			}
			run := NewRun(Workload{Scenario: "naive", Client: goredisadapter.New(rdb), Redis: rdb, Names: 1,
				Pause: 0.3, Mutation: tc.mutation, Models: models, Nodes: relayedNodes(t, "go-redis", relays(t, s, plan{names: 1})), PG: pg})
			ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
			defer cancel()
			wait, err := run.Start(ctx)
			wait()
			if err != nil {
				t.Fatal(err)
			}
			results := map[string]*Result{}
			for _, r := range run.Check(dir) {
				results[r.Model] = r
			}
			for _, m := range tc.models {
				r := results[m]
				if r == nil {
					t.Fatalf("no result for the %s model", m)
				}
				if r.Verdicts[Illegal] == 0 {
					t.Fatalf("%s: the %s model found nothing illegal in %d operations: %+v", tc.mutation, m, r.Ops, r.Verdicts)
				}
				t.Logf("%s: %d of %d histories illegal (%d operations): %s", tc.mutation, r.Verdicts[Illegal], r.Histories, r.Ops, r.Problems[0])
				if !tc.visual {
					continue
				}
				path := r.Problems[0][strings.LastIndex(r.Problems[0], " ")+1:]
				if st, err := os.Stat(path); err != nil || st.Size() == 0 {
					t.Fatalf("no visualization at %s: %v", path, err)
				}
			}
		})
	}
}
