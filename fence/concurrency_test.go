package fence_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/fence"
)

const (
	writers         = 50
	writesPerWriter = 20
)

// regressions counts the places where a history of accepted tokens, in the
// order the resource applied them, goes down.
func regressions(history []int64) int {
	n := 0
	for i := 1; i < len(history); i++ {
		if history[i] < history[i-1] {
			n++
		}
	}
	return n
}

type outcome struct {
	accepted, refused int
	maxTried          int64
	badRefusals       []string // refusals whose StaleError does not add up
}

// race runs 50 writers with random tokens; write performs one write and
// appends the token to the history in the same atomic step.
func race(t *testing.T, write func(ctx context.Context, token int64, value string) error) outcome {
	t.Helper()
	ctx := context.Background()
	var (
		mu  sync.Mutex
		out outcome
		wg  sync.WaitGroup
	)
	var done atomic.Int64        // writes finished, by all writers
	start := make(chan struct{}) // all writers start together
	for w := range writers {
		wg.Go(func() {
			<-start
			for i := range writesPerWriter {
				// Random, in overlapping windows that drift upward with the
				// race's progress (not one writer's), so that many writes are
				// accepted and many refused whatever the schedule.
				token := done.Load()/writers*100 + rand.Int64N(150) + 1
				err := write(ctx, token, fmt.Sprintf("%d/w%d/%d", token, w, i))
				done.Add(1)
				mu.Lock()
				out.maxTried = max(out.maxTried, token)
				var se *fence.StaleError
				switch {
				case err == nil:
					out.accepted++
				case errors.As(err, &se):
					out.refused++
					if se.Token != token || se.Highest <= token {
						out.badRefusals = append(out.badRefusals, se.Error())
					}
				default:
					t.Errorf("write %d: %v", token, err)
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	return out
}

func TestConcurrentRandomTokensNeverAcceptLowerAfterHigher(t *testing.T) {
	store, c, p := newStore(t)
	key, hist := p+"{acct}", p+"{acct}:history"
	// The write and its history entry run in one fenced script, so the
	// history is the order in which the resource accepted tokens.
	const script = "redis.call('SET', KEYS[2], ARGV[2]); redis.call('RPUSH', KEYS[3], ARGV[1])"
	out := race(t, func(ctx context.Context, token int64, value string) error {
		_, err := store.Eval(ctx, token, script, []string{key, hist}, value)
		return err
	})
	history := readHistory(t, c, hist)
	t.Logf("fenced: %d writes, %d accepted, %d refused, %d regressions in the history",
		writers*writesPerWriter, out.accepted, out.refused, regressions(history))

	if out.accepted < 10 || out.refused == 0 {
		t.Fatalf("%d accepted, %d refused: the race did not exercise both verdicts", out.accepted, out.refused)
	}
	if len(history) != out.accepted {
		t.Fatalf("history holds %d entries, writers saw %d accepted", len(history), out.accepted)
	}
	if n := regressions(history); n != 0 {
		t.Fatalf("%d times a lower token was accepted after a higher one: %v", n, history)
	}
	if len(out.badRefusals) > 0 {
		t.Fatalf("refusals that do not add up: %v", out.badRefusals)
	}
	final := mustGet(t, store, key)
	if tok, _, _ := cutToken(final); tok != out.maxTried {
		t.Fatalf("final value %q belongs to token %d, want the highest token tried, %d", final, tok, out.maxTried)
	}
	if h := mustHighest(t, store, key); h != out.maxTried {
		t.Fatalf("highest = %d, want %d", h, out.maxTried)
	}
}

// The control: the same writers and the same history check without the
// fence. The check must catch the regressions, or it proves nothing above.
func TestWithoutFencingConcurrentWritersAcceptLowerTokensAfterHigher(t *testing.T) {
	_, c, p := newStore(t)
	key, hist := p+"{acct}", p+"{acct}:history"
	out := race(t, func(ctx context.Context, token int64, value string) error {
		_, err := c.Eval(ctx, "redis.call('SET', KEYS[1], ARGV[2]); redis.call('RPUSH', KEYS[2], ARGV[1])",
			[]string{key, hist}, token, value).Result()
		if errors.Is(err, redis.Nil) {
			err = nil
		}
		return err
	})
	history := readHistory(t, c, hist)
	n := regressions(history)
	t.Logf("unfenced: %d accepted, %d regressions in the history", out.accepted, n)
	if n == 0 {
		t.Fatalf("no regression among %d unfenced writes with random tokens: the history check cannot see a broken fence", len(history))
	}
}

func readHistory(t *testing.T, c *redis.Client, key string) []int64 {
	t.Helper()
	raw, err := c.LRange(context.Background(), key, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int64, len(raw))
	for i, r := range raw {
		if out[i], err = strconv.ParseInt(r, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func cutToken(v string) (int64, string, bool) {
	for i := range len(v) {
		if v[i] == '/' {
			n, err := strconv.ParseInt(v[:i], 10, 64)
			return n, v[i+1:], err == nil
		}
	}
	return 0, "", false
}
