package httprate_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/httprate"
)

// quotaPolicy is one item of RateLimit-Policy, read strictly.
type quotaPolicy struct {
	q     int64
	w     int64 // 0: not given
	alg   ratelimit.Algorithm
	limit ratelimit.Limit
}

// checkFields parses both fields of resp strictly and checks them against
// the draft and against each other: every RateLimit item names a policy,
// r never exceeds q, and t never exceeds what the algorithm can take to
// restore q (w for the log and GCRA, 2w for the counter, whose previous
// bucket still counts during the current one). It returns r and t by name.
func checkFields(t *testing.T, resp *http.Response, p ratelimit.Policy) map[string][2]int64 {
	t.Helper()
	policies := map[string]quotaPolicy{}
	pf := resp.Header.Values("RateLimit-Policy")
	if len(pf) != 1 {
		t.Fatalf("%d RateLimit-Policy fields, want 1", len(pf))
	}
	items, err := parseSFList(pf[0])
	if err != nil {
		t.Fatalf("RateLimit-Policy: %v", err)
	}
	if len(items) != len(p) {
		t.Fatalf("RateLimit-Policy %s: %d items for %d limits", pf[0], len(items), len(p))
	}
	for i, it := range items {
		name, ok := it.value.(sfString)
		if !ok {
			t.Fatalf("RateLimit-Policy %s: item %d is %T, want a String", pf[0], i, it.value)
		}
		if _, dup := policies[string(name)]; dup {
			t.Fatalf("RateLimit-Policy %s: %q twice", pf[0], name)
		}
		qp := quotaPolicy{alg: p[i].Algorithm(), limit: p[i]}
		for _, prm := range it.params {
			n, ok := prm.value.(int64)
			switch {
			case prm.key != "q" && prm.key != "w":
				t.Fatalf("RateLimit-Policy %s: unexpected parameter %q", pf[0], prm.key)
			case !ok || n <= 0:
				t.Fatalf("RateLimit-Policy %s: %s=%v, want a positive Integer", pf[0], prm.key, prm.value)
			case prm.key == "q":
				qp.q = n
			default:
				qp.w = n
			}
		}
		if qp.q == 0 {
			t.Fatalf("RateLimit-Policy %s: %q has no q", pf[0], name)
		}
		policies[string(name)] = qp
	}

	rf := resp.Header.Values("RateLimit")
	if len(rf) != 1 {
		t.Fatalf("%d RateLimit fields, want 1", len(rf))
	}
	items, err = parseSFList(rf[0])
	if err != nil {
		t.Fatalf("RateLimit: %v", err)
	}
	out := map[string][2]int64{}
	for i, it := range items {
		name, ok := it.value.(sfString)
		if !ok {
			t.Fatalf("RateLimit %s: item %d is %T, want a String", rf[0], i, it.value)
		}
		qp, ok := policies[string(name)]
		if !ok {
			t.Fatalf("RateLimit %s: %q is in no RateLimit-Policy item (%s)", rf[0], name, pf[0])
		}
		if len(it.params) != 2 {
			t.Fatalf("RateLimit %s: parameters %+v, want r and t", rf[0], it.params)
		}
		r, rok := it.params[0].value.(int64)
		tt, tok := it.params[1].value.(int64)
		if it.params[0].key != "r" || it.params[1].key != "t" || !rok || !tok || r < 0 || tt < 0 {
			t.Fatalf("RateLimit %s: parameters %+v, want r and t, non-negative Integers", rf[0], it.params)
		}
		if r > qp.q {
			t.Fatalf("%q: r=%d above q=%d (RateLimit %s, RateLimit-Policy %s)", name, r, qp.q, rf[0], pf[0])
		}
		if qp.w > 0 {
			most := qp.w
			if qp.alg == ratelimit.AlgorithmSlidingCounter {
				most = 2 * qp.w
			}
			if tt > most {
				t.Fatalf("%q (%v): t=%d beyond %d (RateLimit %s, RateLimit-Policy %s)", name, qp.limit, tt, most, rf[0], pf[0])
			}
		}
		out[string(name)] = [2]int64{r, tt}
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		if ra, err := strconv.ParseUint(resp.Header.Get("Retry-After"), 10, 63); err != nil || ra == 0 {
			t.Fatalf("429 with Retry-After %q", resp.Header.Get("Retry-After"))
		}
	}
	return out
}

// A GCRA limit advertised its rate as the quota ("burst";q=1;w=1) while r
// counted down from its burst (r=19): a client got contradictory numbers.
func TestGCRAAdvertisesItsBurstAsTheQuotaThatRCountsDownFrom(t *testing.T) {
	s := redistest.Start(t)
	l := ratelimit.GCRA(1, time.Second, 20).Named("burst")
	sv := serve(t, s, httprate.Config{Policy: ratelimit.Policy{l}})
	resp, _ := get(t, sv.srv.URL)
	if got, want := resp.Header.Get("RateLimit-Policy"), `"burst";q=20;w=20`; got != want {
		t.Fatalf("RateLimit-Policy %s, want %s: 20 at once, earned back at 1 per second", got, want)
	}
	if got, want := resp.Header.Get("RateLimit"), `"burst";r=19;t=1`; got != want {
		t.Fatalf("RateLimit %s, want %s", got, want)
	}
	checkFields(t, resp, ratelimit.Policy{l})
}

func TestEveryAlgorithmsFieldsParseStrictlyAndNeverShowRemainingAboveQuota(t *testing.T) {
	s := redistest.Start(t)
	log := ratelimit.SlidingLog(5, time.Minute).Named("log")
	counter := ratelimit.SlidingCounter(5, time.Minute).Named(`counter "c"`)
	gcra := ratelimit.GCRA(6, time.Minute, 5).Named("gcra")              // q=5, w=50
	fast := ratelimit.GCRA(10, time.Second, 5).Named("fast")             // w=0.5s: not advertised
	odd := ratelimit.SlidingLog(3, 1500*time.Millisecond).Named("odd")   // idem
	unnamed := ratelimit.GCRA(1, 2*time.Second, 3)                       // a derived name
	tiny := ratelimit.SlidingCounter(4, 2*time.Second).Named("counter2") // reaches t > w
	for _, tc := range []struct {
		name   string
		policy ratelimit.Policy
		want   string // RateLimit-Policy
	}{
		{"log", ratelimit.Policy{log}, `"log";q=5;w=60`},
		{"counter", ratelimit.Policy{counter}, `"counter \"c\"";q=5;w=60`},
		{"gcra", ratelimit.Policy{gcra}, `"gcra";q=5;w=50`},
		{"gcra without a whole window", ratelimit.Policy{fast}, `"fast";q=5`},
		{"log without a whole window", ratelimit.Policy{odd}, `"odd";q=3`},
		{"gcra unnamed", ratelimit.Policy{unnamed}, `"1-per-2s-burst-3";q=3;w=6`},
		{"counter on a short window", ratelimit.Policy{tiny}, `"counter2";q=4;w=2`},
		{"all three", ratelimit.Policy{log, counter, gcra}, `"log";q=5;w=60, "counter \"c\"";q=5;w=60, "gcra";q=5;w=50`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sv := serve(t, s, httprate.Config{
				Policy: tc.policy,
				Key:    func(*http.Request) (string, error) { return tc.name, nil }, // fresh state per case
			})
			rejected := 0
			for i := range 8 {
				resp, _ := get(t, sv.srv.URL)
				if got := resp.Header.Get("RateLimit-Policy"); got != tc.want {
					t.Fatalf("RateLimit-Policy %s, want %s", got, tc.want)
				}
				state := checkFields(t, resp, tc.policy)
				if i == 0 {
					for _, l := range tc.policy {
						if got, want := state[l.Name()][0], int64(l.Burst()-1); got != want {
							t.Fatalf("first request: %q r=%d, want q-1 = %d", l.Name(), got, want)
						}
					}
				}
				if resp.StatusCode == http.StatusTooManyRequests {
					rejected++
				}
			}
			if tc.name != "gcra without a whole window" && rejected == 0 {
				t.Fatal("8 requests on a quota of at most 5 and none rejected")
			}
		})
	}
}

// The counter's t may pass w: the requests of its current bucket still
// count, weighted, through the next one: after one request, t is 2w less
// the time into the bucket, above w; the bound checked above is 2w.
func TestSlidingCounterResetMayExceedItsWindowButNotTwice(t *testing.T) {
	s := redistest.Start(t)
	l := ratelimit.SlidingCounter(4, 2*time.Second).Named("c")
	sv := serve(t, s, httprate.Config{Policy: ratelimit.Policy{l}})
	resp, _ := get(t, sv.srv.URL)
	st := checkFields(t, resp, ratelimit.Policy{l})
	if tt := st["c"][1]; tt <= 2 || tt > 4 {
		t.Fatalf("t=%d, want above w=2 and at most 2w", tt)
	}
}
