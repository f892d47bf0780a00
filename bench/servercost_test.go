package bench_test

import (
	"context"
	"testing"

	"github.com/redis-primitives/go/bench"
	"github.com/redis-primitives/go/internal/redistest"
)

// cmd/servercost counts instructions between zero and done; a case that
// fails (a refused acquire that was granted, an admitted request that was
// rejected) or skips a bracket would count the wrong thing. Every case
// runs here against a fixture server, without valgrind.
func TestEveryServerCostCaseRunsItsOperationBetweenZeroAndDone(t *testing.T) {
	s := redistest.Start(t)
	cases, closeAll := bench.CostCases(s.Addr(), s.Prefix()+"cost:", 10)
	defer closeAll()
	if len(cases) < 20 {
		t.Fatalf("%d cases, want PING, the limit, 4 lock cases and 2 per limiter row", len(cases))
	}
	for _, cs := range cases {
		zeroed, dumped := 0, 0
		err := bench.RunCost(context.Background(), cs, 100,
			func() error { zeroed++; return nil },
			func() error {
				if zeroed != 1 {
					t.Errorf("%s: done before zero", cs.Name)
				}
				dumped++
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		if zeroed != 1 || dumped != 1 {
			t.Errorf("%s: zero called %d times, done %d; want once each", cs.Name, zeroed, dumped)
		}
	}
}
