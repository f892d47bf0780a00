package ratelimittest_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/ratelimittest"
)

// reservePair is a reservation made on both sides of a pair by one call.
type reservePair struct {
	redis  *ratelimit.Reservation
	double *ratelimittest.Reservation
}

// The double reserves, settles, extends and releases as the scripts do: on
// random traces of Reserve, Commit (below, at and above the amount),
// Cancel, Extend, settling twice, and decisions between them on the same
// limits, with the clock moving past reservations' expiries, every call
// returns the same Result, the same times and the same error (ids aside)
// on both. Code that reserves can be unit-tested on the double and behave
// so on Redis.
func TestDoubleReservesAsTheRedisLimiterOnRandomTraces(t *testing.T) {
	s := redistest.Start(t)
	steps := 1500
	if testing.Short() {
		steps = 400
	}
	// Windows far longer than the run, on the Clock and in real time, and
	// the Clock only forward: no key expires on one side and not on the
	// other (the server expires keys on real time, the double on the
	// Clock; ADR 0017's give-backs shorten GCRA's TTL to a millisecond
	// when its backlog empties, which forward time cannot tell from a key).
	rules := []ratelimit.Rule{
		ratelimit.SlidingLog(20, 40*time.Minute),
		ratelimit.SlidingCounter(30, 40*time.Minute),
		ratelimit.GCRA(30, time.Hour, 20),
		ratelimit.Policy{ratelimit.SlidingLog(20, 40*time.Minute), ratelimit.SlidingCounter(30, 40*time.Minute), ratelimit.GCRA(30, time.Hour, 20)},
	}
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			p := newPair(t, s, fmt.Sprintf("reserve-agree-%d:", seed))
			rng := rand.New(rand.NewPCG(seed, 35))
			ctx := context.Background()
			var open []reservePair
			seen := map[string]int{}
			for step := range steps {
				p.clk.Advance(time.Duration(rng.Int64N(2_000_000)) * time.Microsecond)
				key, rule := []string{"a", "b", "c", "d"}[rng.IntN(4)], rules[rng.IntN(len(rules))]
				where := func(what string) string {
					return fmt.Sprintf("seed %d step %d at +%v: %s", seed, step, p.clk.Now().Sub(epoch), what)
				}
				switch op := rng.IntN(10); {
				case op < 3 || len(open) == 0:
					amount := 1 + rng.IntN(min(capacity(rule), 6))
					if rng.IntN(20) == 0 {
						amount = capacity(rule) + 1
					}
					ttl := []time.Duration{time.Second, 3 * time.Second, 10 * time.Second}[rng.IntN(3)]
					rr, rerr := p.redis.Reserve(ctx, key, rule, amount, ttl)
					dr, derr := p.double.Reserve(ctx, key, rule, amount, ttl)
					if fmt.Sprint(rerr) != fmt.Sprint(derr) || (rr == nil) != (dr == nil) {
						t.Fatalf("%s: redis %v, double %v", where(fmt.Sprintf("reserve(%q, %v, %d)", key, rule, amount)), rerr, derr)
					}
					if rr == nil {
						seen["reserve refused"]++
						continue
					}
					if !reflect.DeepEqual(rr.Result, dr.Result) || !rr.At.Equal(dr.At) || !rr.Expires.Equal(dr.Expires) || (rr.ID == "") != (dr.ID == "") {
						t.Fatalf("%s:\n redis  %+v at %v until %v\n double %+v at %v until %v", where(fmt.Sprintf("reserve(%q, %v, %d)", key, rule, amount)),
							rr.Result, rr.At, rr.Expires, dr.Result, dr.At, dr.Expires)
					}
					if rr.Result.Allowed {
						seen["reserve admitted"]++
						open = append(open, reservePair{rr, dr})
					} else {
						seen["reserve rejected"]++
					}
				case op < 8:
					i := rng.IntN(len(open))
					rp := open[i]
					var what string
					var rres, dres ratelimit.Result
					var rerr, derr error
					switch k := rng.IntN(4); k {
					case 0, 1:
						actual := rng.IntN(2*rp.redis.Amount + 1)
						what = fmt.Sprintf("commit(%d) of %d", actual, rp.redis.Amount)
						rres, rerr = rp.redis.Commit(ctx, actual)
						dres, derr = rp.double.Commit(ctx, actual)
					case 2:
						what = "cancel"
						rres, rerr = rp.redis.Cancel(ctx)
						dres, derr = rp.double.Cancel(ctx)
					default:
						d := time.Duration(1+rng.IntN(5)) * time.Second
						what = fmt.Sprintf("extend(%v)", d)
						rerr, derr = rp.redis.Extend(ctx, d), rp.double.Extend(ctx, d)
						if rerr == nil && !rp.redis.Expires.Equal(rp.double.Expires) {
							t.Fatalf("%s: expires %v on redis, %v on the double", where(what), rp.redis.Expires, rp.double.Expires)
						}
					}
					rmsg := strings.ReplaceAll(fmt.Sprint(rerr), rp.redis.ID, "ID")
					dmsg := strings.ReplaceAll(fmt.Sprint(derr), rp.double.ID, "ID")
					if !reflect.DeepEqual(rres, dres) || rmsg != dmsg {
						t.Fatalf("%s:\n redis  %+v, %v\n double %+v, %v", where(what), rres, rerr, dres, derr)
					}
					verb := strings.Fields(what)[0]
					verb = verb[:strings.IndexAny(verb+"(", "(")]
					switch {
					case errors.Is(rerr, ratelimit.ErrExpired):
						seen[verb+" expired"]++
					case errors.Is(rerr, ratelimit.ErrSettled):
						seen[verb+" settled"]++
					case rerr != nil:
						t.Fatalf("%s: %v", where(what), rerr)
					default:
						seen[verb]++
					}
					if verb != "extend" && rng.IntN(3) > 0 {
						open = append(open[:i], open[i+1:]...) // most settled reservations are done with
					}
				default:
					n := 1 + rng.IntN(min(capacity(rule), 6))
					c := call{op: []string{"allowN", "take", "peek"}[rng.IntN(3)], key: key, rule: rule, n: n}
					want, werr := c.do(ctx, p.redis)
					got, gerr := c.do(ctx, p.double)
					if !reflect.DeepEqual(got, want) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
						t.Fatalf("%s:\n redis  %+v, %v\n double %+v, %v", where(c.String()), want, werr, got, gerr)
					}
					seen[c.op]++
				}
			}
			t.Logf("%d steps, the Clock at +%v: %v", steps, p.clk.Now().Sub(epoch).Round(time.Second), seen)
			for _, k := range []string{"reserve admitted", "reserve rejected", "reserve refused", "commit", "commit expired",
				"commit settled", "cancel", "cancel settled", "extend", "extend expired", "extend settled"} {
				if seen[k] < 3 {
					t.Errorf("%q happened %d times: the trace does not exercise it", k, seen[k])
				}
			}
		})
	}
}
