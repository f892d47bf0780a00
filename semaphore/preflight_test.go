package semaphore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
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

// A user without CONFIG gets a report that says so, as every primitive's
// Preflight gives, instead of an error that hid the version and the ACL
// findings.
func TestPreflightReportsACONFIGGETTheUserMayNotRunInsteadOfFailing(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--appendonly", "yes"))
	ctx := context.Background()
	if err := s.Client(t).Do(ctx, "ACL", "SETUSER", "noconfig", "on", ">pw", "~*", "&*", "+@all", "-config").Err(); err != nil {
		t.Fatal(err)
	}
	c := s.Client(t, func(o *redis.Options) { o.Username, o.Password = "noconfig", "pw" })
	r, err := newIssuerOn(t, s, goredisadapter.New(c)).Preflight(ctx)
	if err != nil {
		t.Fatalf("Preflight without CONFIG: %v, want a report", err)
	}
	if r.Version == "" || len(r.Refused) != 0 || len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "CONFIG GET") {
		t.Fatalf("report %+v, want the version and only the refused CONFIG GET", r)
	}
}
