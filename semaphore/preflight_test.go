package semaphore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis-primitives/go/internal/redistest"
)

func TestPreflightReportsAServerThatCanLoseTheTokenCounter(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		args []string
		want []string // a word each problem must contain, in order
	}{
		{"persistent, noeviction", []string{"--appendonly", "yes"}, nil},
		{"allkeys-lru, no persistence", []string{"--maxmemory-policy", "allkeys-lru"}, []string{"allkeys-lru", "no persistence"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := redistest.Start(t, redistest.Own(), redistest.Args(tc.args...))
			r, err := newIssuer(t, s).Preflight(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("Redis %s: %q", r.Version, r.Problems)
			if len(r.Problems) != len(tc.want) || r.OK() != (len(tc.want) == 0) || len(r.Refused) != 0 || r.Version == "" {
				t.Fatalf("report %+v, want problems about %q", r, tc.want)
			}
			for n, w := range tc.want {
				if !strings.Contains(r.Problems[n], w) {
					t.Fatalf("problem %q does not name %q", r.Problems[n], w)
				}
			}
		})
	}
}
