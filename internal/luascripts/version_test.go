package luascripts_test

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// A Redis older than 7.0 has no EVALSHA_RO or EVAL_RO. A server of our own
// with those commands renamed away answers as 6.2 does, and the error must
// say what to do about it, not only repeat the server's words.
func TestAServerWithoutTheReadOnlyCommandsSaysItNeedsRedis7(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--rename-command", "EVALSHA_RO", "", "--rename-command", "EVAL_RO", ""))
	c := s.Client(t)
	ctx := context.Background()
	ro := luascripts.NewReadOnly("get", "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])")
	err := ro.Run(ctx, goredisadapter.New(c), []string{"k"}).Err
	if !errors.Is(err, luascripts.ErrRedisTooOld) {
		t.Fatalf("read-only script on a server without EVALSHA_RO: %v; want ErrRedisTooOld", err)
	}
	t.Logf("the error reads: %v", err)
	// Scripts that write still run: only what 7.0 added is missing.
	w := luascripts.New("set", "return redis.call('SET', KEYS[1], 'v')")
	if err := w.Run(ctx, goredisadapter.New(c), []string{"k"}).Err; err != nil {
		t.Fatalf("a plain script: %v", err)
	}
}

// Redis 6.2 words an unknown command with backticks ("unknown command
// `evalsha_ro`, with args beginning with: `…`, "), where 7.0 (and the
// renamed-away stand-in above) uses quotes: through a relay that answers as
// 6.2 does, a read-only script still says the server is too old, and so
// does a script with a flags line sent by EVAL.
func TestRedis62sRefusalOfTheReadOnlyScriptsSaysItNeedsRedis7(t *testing.T) {
	s := redistest.Start(t)
	r := redistest.StartRedis62(t, s.Addr())
	c := s.Client(t, func(o *redis.Options) { o.Addr = r.Addr() })
	ctx := context.Background()
	ro := luascripts.NewReadOnly("get", "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])")
	err := ro.Run(ctx, goredisadapter.New(c), []string{s.Prefix() + "k"}).Err
	if !errors.Is(err, luascripts.ErrRedisTooOld) {
		t.Fatalf("read-only script on Redis 6.2: %v; want ErrRedisTooOld", err)
	}
	t.Logf("the error reads: %v", err)
	flagged := luascripts.New("flagged", "#!lua flags=no-writes\nreturn 1")
	if err := flagged.Run(ctx, goredisadapter.New(c), nil).Err; !errors.Is(err, luascripts.ErrRedisTooOld) {
		t.Errorf("script with a flags line on Redis 6.2: %v; want ErrRedisTooOld", err)
	}
	w := luascripts.New("set", "return redis.call('SET', KEYS[1], 'v')")
	if err := w.Run(ctx, goredisadapter.New(c), []string{s.Prefix() + "k"}).Err; err != nil {
		t.Fatalf("a plain script on Redis 6.2: %v", err)
	}
}

// The replies of 7.0 without the commands (quotes) and of 6.2 (backticks)
// to EVALSHA_RO and EVAL_RO, and to a script with a flags line.
func TestCheckVersionKnowsTheRefusalsOfAServerOlderThan7(t *testing.T) {
	for _, reply := range []string{
		"ERR unknown command 'evalsha_ro', with args beginning with: 'abc' '2' ",
		"ERR unknown command 'EVAL_RO', with args beginning with: ",
		"ERR unknown command `evalsha_ro`, with args beginning with: `abc`, `2`, ",
		"ERR unknown command `eval_ro`, with args beginning with: ",
		"ERR Error compiling script (new function): user_script:1: unexpected symbol near '#' ",
		// miniredis, whose Lua parses scripts as Redis 6 does
		"ERR Error compiling script (new function): <string> line:1(column:1) near '#':   syntax error ",
	} {
		if err := luascripts.CheckVersion(errors.New(reply)); !errors.Is(err, luascripts.ErrRedisTooOld) {
			t.Errorf("%q: %v does not match ErrRedisTooOld", reply, err)
		}
	}
	if err := luascripts.CheckVersion(errors.New("ERR something else")); errors.Is(err, luascripts.ErrRedisTooOld) {
		t.Errorf("an unrelated error matched ErrRedisTooOld: %v", err)
	}
}

// A server older than 7.0 stops at the '#' of a flags line; a script
// without one that stops at a '#' has a syntax error of its own (fence's
// Eval runs a caller's Lua), on every server, and must not read as a Redis
// older than 7.0.
func TestACompileErrorAtAHashOfAScriptWithoutAFlagsLineIsNotErrRedisTooOld(t *testing.T) {
	s := redistest.Start(t)
	c := goredisadapter.New(s.Client(t))
	ctx := context.Background()
	for _, src := range []string{"# comment\nreturn 1", "local n = 1 #", "return 1\n#!lua flags=no-writes"} {
		err := luascripts.New("hash", src).Run(ctx, c, nil).Err
		if err == nil || errors.Is(err, luascripts.ErrRedisTooOld) {
			t.Errorf("%q: %v; want the server's compile error alone", src, err)
		}
	}
}

// The start-up checks read the version from the server itself: a 7.0
// server runs the scripts.
func TestServerVersionReadsTheServersOwnVersion(t *testing.T) {
	s := redistest.Start(t)
	version, scriptsRun, err := luascripts.ServerVersion(context.Background(), goredisadapter.New(s.Client(t)))
	if err != nil || version == "" || !scriptsRun {
		t.Fatalf("ServerVersion: %q, %v, %v; want a 7.x version that runs the scripts", version, scriptsRun, err)
	}
	t.Logf("redis_version %s", version)
}
