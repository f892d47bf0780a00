package fence_test

import (
	"context"
	"reflect"
	"testing"
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
