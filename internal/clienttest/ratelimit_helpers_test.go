package clienttest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/httprate"
)

// The helpers of ratelimit_test.go.

// rateLimitPasses are a test's two ways of sending: each decision as its
// own call, and WithBatching(16).
var rateLimitPasses = []struct {
	name  string
	batch int
}{{"unbatched", 0}, {"batched", 16}}

// rateLimitOpts are the options of a Limiter whose keys start with prefix,
// batched by batch when it is positive.
func rateLimitOpts(prefix string, batch int) []ratelimit.Option {
	opts := []ratelimit.Option{ratelimit.WithPrefix(prefix)}
	if batch > 0 {
		opts = append(opts, ratelimit.WithBatching(batch))
	}
	return opts
}

// rateLimitNew returns a Limiter on client.
func rateLimitNew(t *testing.T, client ratelimit.Client, opts ...ratelimit.Option) *ratelimit.Limiter {
	t.Helper()
	l, err := ratelimit.New(client, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// rateLimitAlgorithms are the three limits of the same shape: n per
// window.
func rateLimitAlgorithms(n int, window time.Duration) map[string]ratelimit.Limit {
	return map[string]ratelimit.Limit{
		"log":     ratelimit.SlidingLog(n, window),
		"counter": ratelimit.SlidingCounter(n, window),
		// GCRA with burst n refills one every window/n: from empty it
		// admits n at once, then one per window/n.
		"gcra": ratelimit.GCRA(n, window, n),
	}
}

// rateLimitTogether runs f(0) … f(n-1) in n goroutines released at once,
// fails t on any error, and returns how many reported true.
func rateLimitTogether(t *testing.T, n int, f func(i int) (bool, error)) int {
	t.Helper()
	var (
		wg       sync.WaitGroup
		start    = make(chan struct{})
		admitted atomic.Int64
		errs     = make(chan error, n)
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ok, err := f(i)
			if err != nil {
				errs <- err
				return
			}
			if ok {
				admitted.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return int(admitted.Load())
}

// rateLimitOutcomes counts the outcomes of rateLimitHammer's calls:
// admitted per key, the calls that failed (ErrReplyLost apart) with the
// first error.
type rateLimitOutcomes struct {
	mu       sync.Mutex
	admitted map[string]int
	calls    atomic.Int64
	failed   atomic.Int64
	lost     atomic.Int64
	first    error
}

// rateLimitHammer runs callers goroutines making calls on keys until stop
// is closed; the returned func waits for them.
func rateLimitHammer(l *ratelimit.Limiter, callers int, key func(g, i int) string, rule ratelimit.Rule, stop chan struct{}) (*rateLimitOutcomes, func()) {
	o := &rateLimitOutcomes{admitted: map[string]int{}}
	var wg sync.WaitGroup
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := key(g, i)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				res, err := l.Allow(ctx, k, rule)
				cancel()
				o.calls.Add(1)
				switch {
				case errors.Is(err, ratelimit.ErrReplyLost):
					o.lost.Add(1)
				case err != nil:
					if o.failed.Add(1) == 1 {
						o.mu.Lock()
						o.first = err
						o.mu.Unlock()
					}
				case res.Allowed:
					o.mu.Lock()
					o.admitted[k]++
					o.mu.Unlock()
				}
			}
		}()
	}
	return o, wg.Wait
}

// rateLimitCalls is a client that counts what a Limiter asks of the
// client it wraps, which does the rest: per round (Eval), the batch.lua
// calls by SHA1 (EVALSHA: a call sent again with its source after
// NOSCRIPT is not counted twice), the decisions they carry, and whether
// two of them went to one primary. It reports the start of each round on
// started, if set.
type rateLimitCalls struct {
	luascripts.Client
	started chan struct{}

	mu                     sync.Mutex
	rounds, calls, batched int
	twoToOne               int
}

func (c *rateLimitCalls) Eval(ctx context.Context, calls []luascripts.Call) {
	n, decisions, two := 0, 0, 0
	primaries := map[string]bool{}
	for _, call := range calls {
		if call.Script.Name() != "batch.lua" || call.Source {
			continue
		}
		n++
		decisions += rateLimitDecisionsIn(call.Args)
		if p, err := c.Client.Primary(ctx, call.Keys[0]); err == nil {
			if primaries[p] {
				two++
			}
			primaries[p] = true
		}
	}
	c.mu.Lock()
	c.rounds++
	c.calls += n
	c.batched += decisions
	c.twoToOne += two
	c.mu.Unlock()
	if c.started != nil {
		select {
		case c.started <- struct{}{}:
		default:
		}
	}
	c.Client.Eval(ctx, calls)
}

func (c *rateLimitCalls) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rounds, c.calls, c.batched, c.twoToOne = 0, 0, 0, 0
}

func (c *rateLimitCalls) seen() (rounds, calls, batched, twoToOne int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rounds, c.calls, c.batched, c.twoToOne
}

// rateLimitRoutes reports whether client names the primary of a key
// (Client.Primary), which a Limiter's batches are grouped by; a client
// that routes each call itself answers luascripts.ErrNoRoute.
func rateLimitRoutes(ctx context.Context, client luascripts.Client) bool {
	_, err := client.Primary(ctx, "{u0}")
	return !errors.Is(err, luascripts.ErrNoRoute)
}

// rateLimitDecisionsIn returns the decisions a batch.lua call's arguments
// carry: per decision its head, whose first byte is m, and its m keys.
func rateLimitDecisionsIn(args []any) int {
	n := 0
	for j := 0; j < len(args); n++ {
		head, _ := args[j].(string)
		m := 0
		if head != "" {
			m = int(head[0])
		}
		j += 1 + m
	}
	return n
}

// rateLimitScriptCalls is what a server says it ran: EVALSHA and EVAL
// calls (INFO commandstats).
func rateLimitScriptCalls(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, line := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_eval"); ok {
			_, fields, _ := strings.Cut(rest, ":")
			for _, f := range strings.Split(fields, ",") {
				if v, ok := strings.CutPrefix(f, "calls="); ok {
					k, _ := strconv.ParseInt(v, 10, 64)
					n += k
				}
			}
		}
	}
	return n
}

// rateLimitReservationPaths runs every path of reserve.lua and settle.lua
// on key under rule (of limits of 2 per window, spent): reserve, commit
// below and above, cancel, a retried settle, and a release by the TTL.
func rateLimitReservationPaths(ctx context.Context, l *ratelimit.Limiter, key string, rule ratelimit.Rule, window time.Duration) error {
	if err := l.Reset(ctx, key, rule); err != nil {
		return err
	}
	a, err := l.Reserve(ctx, key, rule, 2, time.Minute)
	if err != nil || !a.Result.Allowed {
		return fmt.Errorf("reserve 2: %+v %v", a, err)
	}
	if res, err := a.Commit(ctx, 1); err != nil || res.Granted != 1 {
		return fmt.Errorf("commit 1 of 2: %+v %v", res, err)
	}
	b, err := l.Reserve(ctx, key, rule, 1, time.Minute)
	if err != nil || !b.Result.Allowed {
		return fmt.Errorf("reserve the one given back: %+v %v", b, err)
	}
	if _, err := b.Cancel(ctx); err != nil {
		return fmt.Errorf("cancel: %w", err)
	}
	if _, err := b.Cancel(ctx); !errors.Is(err, ratelimit.ErrSettled) {
		return fmt.Errorf("cancel again: %v", err)
	}
	c, err := l.Reserve(ctx, key, rule, 1, time.Millisecond)
	if err != nil || !c.Result.Allowed {
		return fmt.Errorf("reserve for a ms: %+v %v", c, err)
	}
	// Until the TTL releases c, a reservation of 1 more is refused; then
	// it fits (the release gives back what the limits still count).
	for deadline := time.Now().Add(10 * window); ; {
		d, err := l.Reserve(ctx, key, rule, 1, time.Minute)
		if err != nil {
			return err
		}
		if d.Result.Allowed {
			if res, err := d.Commit(ctx, 2); err != nil || res.Granted < 1 {
				return fmt.Errorf("commit above the reservation: %+v %v", res, err)
			}
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("the expired reservation was never released")
		}
		time.Sleep(time.Millisecond)
	}
}

// rateLimitServed is an HTTP server behind httprate's middleware.
type rateLimitServed struct {
	srv   *httptest.Server
	calls atomic.Int64
	errs  atomic.Value // last error in an Event given to Hook
}

// rateLimitServe serves a handler that answers "ok" behind the middleware
// of cfg deciding with l.
func rateLimitServe(t *testing.T, l *ratelimit.Limiter, cfg httprate.Config) *rateLimitServed {
	t.Helper()
	out := &rateLimitServed{}
	cfg.Limiter = l
	var err error
	if cfg.Key == nil {
		cfg.Key, err = httprate.ClientIP(httprate.ClientIPConfig{})
		if err != nil {
			t.Fatal(err)
		}
	}
	cfg.Hook = func(_ context.Context, e httprate.Event) {
		if e.Err != nil {
			out.errs.Store(e.Err)
		}
	}
	m, err := httprate.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out.srv = httptest.NewServer(m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out.calls.Add(1)
		_, _ = io.WriteString(w, "ok")
	})))
	t.Cleanup(out.srv.Close)
	return out
}

func rateLimitGet(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}
