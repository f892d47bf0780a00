package fence_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/internal/redistest"
)

func TestEvalRunsCallersWriteWithReservedKeysAndArgs(t *testing.T) {
	store, c, p := newStore(t)
	ctx := context.Background()
	zset, log := p+"{board}", p+"{board}:log"
	// KEYS[1]/ARGV[1] are the mark and the token; the caller's start at 2.
	script := `
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
redis.call('RPUSH', KEYS[3], ARGV[1])
return {KEYS[1], ARGV[1], redis.call('ZCARD', KEYS[2])}`
	got, err := store.Eval(ctx, 3, script, []string{zset, log}, 10, "alice")
	if err != nil {
		t.Fatal(err)
	}
	want := []any{zset + ":fence", "3", int64(1)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("script returned %#v, want %#v (mark, token, then the caller's result)", got, want)
	}
	if s, err := c.ZScore(ctx, zset, "alice").Result(); err != nil || s != 10 {
		t.Fatalf("zscore = %v, %v", s, err)
	}
	if h := mustHighest(t, store, zset); h != 3 {
		t.Fatalf("highest = %d, want 3", h)
	}
}

func TestRefusedEvalDoesNotRunTheCallersWrite(t *testing.T) {
	store, c, p := newStore(t)
	ctx := context.Background()
	key, ran := p+"{k}", p+"{k}:ran"
	if err := store.Set(ctx, 8, key, "v8"); err != nil {
		t.Fatal(err)
	}
	_, err := store.Eval(ctx, 7, "redis.call('INCR', KEYS[3])", []string{key, ran})
	wantStale(t, err, 7, 8)
	if n, err := c.Exists(ctx, ran).Result(); err != nil || n != 0 {
		t.Fatalf("the refused script ran: exists = %d, %v", n, err)
	}
	// A script with no return value reports nil.
	res, err := store.Eval(ctx, 8, "redis.call('INCR', KEYS[3])", []string{key, ran})
	if err != nil || res != nil {
		t.Fatalf("eval = %v, %v; want nil, nil", res, err)
	}
}

func TestEvalScriptErrorIsReturned(t *testing.T) {
	store, _, p := newStore(t)
	_, err := store.Eval(context.Background(), 1, "return redis.call('NOSUCHCOMMAND')", []string{p + "{k}"})
	if err == nil {
		t.Fatal("a failing script reported success")
	}
}

// Fence puts the caller's body inside a function in the middle of its own
// script (eval.lua), where a line cannot start with '#': no flags line,
// nor a '#' comment (Lua's comments are "--"), can compile there. Such a
// body is refused as the doc says, before any round trip; it was sent,
// and the server's compile error read as a Redis older than 7.0.
func TestEvalOfABodyStartingWithHashReturnsErrInvalidScriptInsteadOfErrRedisTooOld(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	c := s.Client(t)
	store := newStoreOn(t, s)
	ctx := context.Background()
	for _, body := range []string{
		"#!lua flags=no-writes\nreturn 1",
		"#!lua\nreturn 1",
		"# comment\nreturn 1",
		" \n\t#!lua flags=no-writes\nreturn 1",
	} {
		_, err := store.Eval(ctx, 1, body, []string{"{k}"})
		if !errors.Is(err, fence.ErrInvalidScript) || errors.Is(err, fence.ErrRedisTooOld) {
			t.Errorf("Eval(%q): %v; want ErrInvalidScript, not ErrRedisTooOld", body, err)
		}
	}
	stats, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stats, "cmdstat_eval") {
		t.Fatalf("a refused body made a round trip:\n%s", stats)
	}
}

// A caller's own Lua syntax error is the caller's, on every server: it
// must not read as a Redis older than 7.0, as it did whenever the server
// stopped at a '#' ("unexpected symbol near '#'"), the words with which a
// Redis 6 refuses the flags line of the project's own read-only scripts.
func TestEvalOfACallersSyntaxErrorAtAHashIsNotReportedAsErrRedisTooOld(t *testing.T) {
	store, _, p := newStore(t)
	ctx := context.Background()
	for _, body := range []string{
		"redis.call('SET', KEYS[2], 'x')\n# comment\nreturn 1",
		"local n = 1 #",
		"redis.call('SET', KEYS[2], 'x')\n#!lua flags=no-writes",
		"return +", // a syntax error elsewhere was never misread
	} {
		_, err := store.Eval(ctx, 1, body, []string{p + "{k}"})
		if err == nil || errors.Is(err, fence.ErrRedisTooOld) || errors.Is(err, fence.ErrInvalidScript) {
			t.Errorf("Eval(%q): %v; want the server's compile error alone", body, err)
		} else {
			t.Logf("Eval(%q): %v", body, err)
		}
	}
}
