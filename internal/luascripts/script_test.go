package luascripts_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

func TestRunFallsBackToEvalAfterScriptFlush(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	incr := luascripts.New("incr", "return redis.call('INCR', KEYS[1])")
	key := s.Prefix() + "n"

	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// The server has never seen the script: EVALSHA answers NOSCRIPT.
	if err := c.EvalSha(ctx, incr.SHA1(), []string{key}).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT") {
		t.Fatalf("EVALSHA of an unknown script: %v, want NOSCRIPT", err)
	}
	if n, err := incr.Run(ctx, goredisadapter.New(c), []string{key}).Int(); err != nil || n != 1 {
		t.Fatalf("first run: %d, %v", n, err)
	}
	// EVAL cached it: now EVALSHA alone works.
	if n, err := c.EvalSha(ctx, incr.SHA1(), []string{key}).Int(); err != nil || n != 2 {
		t.Fatalf("EVALSHA after the fallback: %d, %v", n, err)
	}
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := incr.Run(ctx, goredisadapter.New(c), []string{key}).Int(); err != nil || n != 3 {
		t.Fatalf("run after SCRIPT FLUSH: %d, %v (the script must run exactly once)", n, err)
	}
}

func TestScriptErrorIsReturnedNotRetried(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	key := s.Prefix() + "n"
	bad := luascripts.New("bad", "redis.call('INCR', KEYS[1]); return redis.error_reply('BOOM')")
	if err := bad.Run(ctx, goredisadapter.New(c), []string{key}).Err; err == nil || !strings.Contains(err.Error(), "BOOM") {
		t.Fatalf("err = %v, want BOOM", err)
	}
	if n := c.Get(ctx, key).Val(); n != "1" {
		t.Fatalf("a failing script ran %s times, want once", n)
	}
}

func TestReadOnlyScriptCannotWrite(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	w := luascripts.NewReadOnly("w", "#!lua flags=no-writes\nreturn redis.call('SET', KEYS[1], 'x')")
	if err := w.Run(ctx, goredisadapter.New(c), []string{s.Prefix() + "k"}).Err; err == nil {
		t.Fatal("a read-only script wrote")
	}
}

// The digest a Script sends with EVALSHA is the one the server computes,
// or every call would pay for a NOSCRIPT round trip.
func TestSHA1IsTheServersDigest(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	for _, sc := range []*luascripts.Script{
		luascripts.New("w", "return redis.call('INCR', KEYS[1])"),
		luascripts.NewReadOnly("r", "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])"),
	} {
		sha, err := c.ScriptLoad(context.Background(), sc.Source()).Result()
		if err != nil {
			t.Fatalf("%s: %v", sc.Name(), err)
		}
		if sha != sc.SHA1() {
			t.Errorf("%s: server digest %s, ours %s", sc.Name(), sha, sc.SHA1())
		}
	}
}

func TestIsNilSeesANilClientInsideTheInterface(t *testing.T) {
	var typed *redis.Client
	if !luascripts.IsNil(nil) || !luascripts.IsNil(typed) {
		t.Fatal("a nil client was not seen as nil")
	}
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	if luascripts.IsNil(c) {
		t.Fatal("a live client was seen as nil")
	}
}

// A batch sent after a SCRIPT FLUSH: every call answers NOSCRIPT and goes
// once more with its source, and each runs exactly once.
func TestSendOfABatchFallsBackToEvalAfterScriptFlushAndRunsEachCallOnce(t *testing.T) {
	s := redistest.Start(t)
	c := s.Client(t)
	ctx := context.Background()
	incr := luascripts.New("incr", "return redis.call('INCR', KEYS[1])")
	get := luascripts.NewReadOnly("get", "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])")
	key := s.Prefix() + "n"
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	calls := []luascripts.Call{
		{Script: incr, Keys: []string{key}},
		{Script: incr, Keys: []string{key}},
		{Script: get, Keys: []string{key}},
	}
	luascripts.Send(ctx, goredisadapter.New(c), calls)
	for i, want := range []int64{1, 2} {
		if n, err := calls[i].Result().Int64(); err != nil || n != want {
			t.Fatalf("call %d: %d, %v; want %d", i, n, err, want)
		}
	}
	if v, err := calls[2].Result().Text(); err != nil || v != "2" {
		t.Fatalf("read-only call: %q, %v; want \"2\"", v, err)
	}
	if v := c.Get(ctx, key).Val(); v != "2" {
		t.Fatalf("counter %q after the batch; want 2: a call ran twice or not at all", v)
	}
}
