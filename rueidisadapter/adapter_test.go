package rueidisadapter_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/rueidisadapter"
)

func TestNewRefusesANilClient(t *testing.T) {
	if _, err := rueidisadapter.New(nil); !errors.Is(err, rueidisadapter.ErrNilClient) {
		t.Fatalf("New(nil): %v, want ErrNilClient", err)
	}
}

// The primitives read replies and errors as go-redis gives them: each
// command's value and error through the adapter must be go-redis's own,
// on the same server.
func TestRepliesAndErrorsReadAsGoRedisReadsThem(t *testing.T) {
	s := redistest.Start(t)
	direct := redis.NewClient(&redis.Options{Addr: s.Addr(), DisableIdentity: true})
	t.Cleanup(func() { _ = direct.Close() })
	adapted, err := rueidisadapter.New(newRueidis(t, s.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	k := s.Prefix() + "k"
	h := s.Prefix() + "h"
	if err := direct.HSet(ctx, h, "a", "1", "b", "x").Err(); err != nil {
		t.Fatal(err)
	}
	if err := direct.Set(ctx, k, "v", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	z := s.Prefix() + "z"
	if err := direct.ZAdd(ctx, z, redis.Z{Score: 1.5, Member: "a"}, redis.Z{Score: 2, Member: "b"}).Err(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		do   func(c *redis.Client) redis.Cmder
	}{
		{"eval nested", func(c *redis.Client) redis.Cmder {
			return c.Eval(ctx, "return {1, 'two', {3, false}, redis.status_reply('OK')}", nil)
		}},
		{"eval nil", func(c *redis.Client) redis.Cmder { return c.Eval(ctx, "return false", nil) }},
		{"eval error", func(c *redis.Client) redis.Cmder { return c.Eval(ctx, "return redis.error_reply('ERR boom')", nil) }},
		{"eval code", func(c *redis.Client) redis.Cmder {
			return c.Eval(ctx, "return redis.error_reply('NOPERM not you')", nil)
		}},
		{"eval syntax", func(c *redis.Client) redis.Cmder {
			return c.Eval(ctx, "return redis.pcall('SET', KEYS[1], 'v', 'NX', 'XX')", []string{k})
		}},
		{"evalsha unknown", func(c *redis.Client) redis.Cmder {
			return c.EvalSha(ctx, "0000000000000000000000000000000000000000", nil)
		}},
		{"unknown command", func(c *redis.Client) redis.Cmder { return c.Do(ctx, "NOSUCHCOMMAND", "x") }},
		{"wrongtype", func(c *redis.Client) redis.Cmder { return c.LLen(ctx, k) }},
		{"get", func(c *redis.Client) redis.Cmder { return c.Get(ctx, k) }},
		{"get missing", func(c *redis.Client) redis.Cmder { return c.Get(ctx, s.Prefix()+"missing") }},
		{"exists", func(c *redis.Client) redis.Cmder { return c.Exists(ctx, k, s.Prefix()+"missing") }},
		{"ttl missing", func(c *redis.Client) redis.Cmder { return c.TTL(ctx, s.Prefix()+"missing") }},
		{"pttl no expiry", func(c *redis.Client) redis.Cmder { return c.PTTL(ctx, h) }},
		{"hgetall", func(c *redis.Client) redis.Cmder { return c.HGetAll(ctx, h) }},
		{"hmget", func(c *redis.Client) redis.Cmder { return c.HMGet(ctx, h, "a", "nope") }},
		{"config get", func(c *redis.Client) redis.Cmder { return c.ConfigGet(ctx, "maxmemory-policy") }},
		{"script exists", func(c *redis.Client) redis.Cmder {
			return c.ScriptExists(ctx, "0000000000000000000000000000000000000000")
		}},
		{"numsub", func(c *redis.Client) redis.Cmder { return c.PubSubNumSub(ctx, s.Prefix()+"chan") }},
		{"ping", func(c *redis.Client) redis.Cmder { return c.Ping(ctx) }},
		{"scan", func(c *redis.Client) redis.Cmder { return c.Scan(ctx, 0, s.Prefix()+"*", 1000) }},
		{"zrange withscores", func(c *redis.Client) redis.Cmder {
			return c.ZRangeWithScores(ctx, z, 0, -1)
		}},
	}
	for _, tc := range cases {
		want, got := tc.do(direct), tc.do(adapted)
		if fmt.Sprint(got.Err()) != fmt.Sprint(want.Err()) {
			t.Errorf("%s: error %q through the adapter, %q on go-redis", tc.name, got.Err(), want.Err())
		}
		if !errors.Is(got.Err(), redis.Nil) && errors.Is(want.Err(), redis.Nil) {
			t.Errorf("%s: %v through the adapter is not redis.Nil", tc.name, got.Err())
		}
		var re redis.Error
		if errors.As(want.Err(), &re) && !errors.As(got.Err(), &re) {
			t.Errorf("%s: %v through the adapter is not a redis.Error", tc.name, got.Err())
		}
		if gv, wv := value(got), value(want); !reflect.DeepEqual(gv, wv) {
			t.Errorf("%s: %#v through the adapter, %#v on go-redis", tc.name, gv, wv)
		}
	}
}

// value is a command's value, as its Val method returns it.
func value(cmd redis.Cmder) any {
	v := reflect.ValueOf(cmd).MethodByName("Val")
	if !v.IsValid() {
		return nil
	}
	return v.Call(nil)[0].Interface()
}

// Scripts go as EVALSHA, and again as EVAL when the server does not have
// them (NOSCRIPT): after SCRIPT FLUSH a lock still acquires, extends and
// releases.
func TestScriptsRunAgainAfterTheServerForgetsThem(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	c, err := rueidisadapter.New(newRueidis(t, s.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	l, err := lock.New(c, lock.WithPrefix(s.Prefix()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 3 {
		if err := c.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		lease, err := l.Acquire(ctx, "job", time.Second)
		if err != nil {
			t.Fatalf("round %d: acquire after SCRIPT FLUSH: %v", i, err)
		}
		if err := c.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if ok, err := l.Release(ctx, lease); !ok || err != nil {
			t.Fatalf("round %d: release after SCRIPT FLUSH: %v, %v", i, ok, err)
		}
	}
}

// What the adapter cannot do through rueidis says so, instead of
// dialling an address no one gave it.
func TestSubscribeAndTransactionsSayTheyAreUnsupported(t *testing.T) {
	s := redistest.Start(t)
	c, err := rueidisadapter.New(newRueidis(t, s.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ps := c.Subscribe(ctx, s.Prefix()+"chan")
	defer ps.Close()
	if _, err := ps.Receive(ctx); !errors.Is(err, rueidisadapter.ErrUnsupported) {
		t.Errorf("Subscribe: %v, want ErrUnsupported", err)
	}
	_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, s.Prefix()+"n")
		return nil
	})
	if !errors.Is(err, rueidisadapter.ErrUnsupported) {
		t.Errorf("TxPipelined: %v, want ErrUnsupported", err)
	}
	if n, err := c.Exists(ctx, s.Prefix()+"n").Result(); err != nil || n != 0 {
		t.Errorf("the refused transaction ran: EXISTS %d, %v", n, err)
	}
}

// A closed rueidis client ends the adapter's calls with redis.ErrClosed.
func TestCallsAfterTheRueidisClientClosesEndWithErrClosed(t *testing.T) {
	s := redistest.Start(t)
	rc := newRueidis(t, s.Addr())
	c, err := rueidisadapter.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	l, err := lock.New(c, lock.WithPrefix(s.Prefix()))
	if err != nil {
		t.Fatal(err)
	}
	rc.Close()
	if _, err := l.Acquire(context.Background(), "job", time.Second); !errors.Is(err, redis.ErrClosed) {
		t.Fatalf("acquire on a closed rueidis client: %v, want redis.ErrClosed", err)
	}
}

// On a Cluster, rueidis routes each call by its key's slot: locks on names
// of every node acquire, a waiter wakes on a release published on another
// node, and batched rate-limit decisions on keys of every slot are each
// counted once (not sent as one script call across slots).
func TestOnAClusterEveryPrimitiveCallReachesItsKeysNode(t *testing.T) {
	cl := redistest.StartCluster(t)
	var addrs []string
	for _, n := range cl.Nodes() {
		addrs = append(addrs, n.Addr())
	}
	c, err := rueidisadapter.New(newRueidis(t, addrs...))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l, err := lock.New(c, lock.WithPrefix("adapter:lock:"), lock.WithWaitBackoff(10*time.Second, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		name := "n" + strconv.Itoa(i)
		lease, err := l.Acquire(ctx, name, time.Second)
		if err != nil {
			t.Fatalf("acquire %s: %v", name, err)
		}
		if ok, err := l.Release(ctx, lease); !ok || err != nil {
			t.Fatalf("release %s: %v, %v", name, ok, err)
		}
	}

	held, err := l.Acquire(ctx, "contended", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	woke := make(chan error, 1)
	go func() {
		lease, err := l.AcquireWait(ctx, "contended", time.Second)
		if err == nil {
			_, err = l.Release(ctx, lease)
		}
		woke <- err
	}()
	time.Sleep(200 * time.Millisecond) // let the waiter subscribe; the backoff is 10 s
	released := time.Now()
	if _, err := l.Release(ctx, held); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-woke:
		t.Logf("the waiter acquired %v after the release", time.Since(released))
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter did not wake within 5 s of the release (its fallback backoff is 10 s): no notification")
	}

	rl, err := ratelimit.New(c, ratelimit.WithPrefix("adapter:rl:"), ratelimit.WithBatching(64))
	if err != nil {
		t.Fatal(err)
	}
	const keys, per = 200, 5
	limit := ratelimit.GCRA(per, time.Hour, per)
	var wg sync.WaitGroup
	errs := make(chan error, keys*(per+1))
	allowed := make([]int, keys)
	var mu sync.Mutex
	for k := range keys {
		for range per + 1 {
			wg.Go(func() {
				res, err := rl.Allow(ctx, "k"+strconv.Itoa(k), limit)
				if err != nil {
					errs <- err
					return
				}
				if res.Allowed {
					mu.Lock()
					allowed[k]++
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("batched decision: %v", err)
	}
	for k, n := range allowed {
		if n != per {
			t.Fatalf("key k%d: %d of %d decisions allowed, want the limit, %d", k, n, per+1, per)
		}
	}
}

// A hook added with AddHook wraps every command and pipeline, as on a
// go-redis client; one added with the client's own AddHook, which go-redis
// would run after the adapter's hook where nothing calls it, fails every
// call saying so instead of never running.
func TestHooksRunAroundEveryCallOrTheCallsFailSayingWhy(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	c, err := rueidisadapter.New(newRueidis(t, s.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	counts := &redistest.PipelineCount{}
	if err := rueidisadapter.AddHook(c, counts); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, s.Prefix()+"a", "1", time.Minute)
		p.Get(ctx, s.Prefix()+"a")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if p, n := counts.Pipelines.Load(), counts.Cmds.Load(); p != 1 || n != 2 {
		t.Fatalf("the hook saw %d pipelines of %d commands, want 1 of 2", p, n)
	}
	plain := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer plain.Close()
	if err := rueidisadapter.AddHook(plain, counts); !errors.Is(err, rueidisadapter.ErrNotAdapted) {
		t.Errorf("AddHook on a plain go-redis client: %v, want ErrNotAdapted", err)
	}

	c.AddHook(&redistest.PipelineCount{})
	if err := c.Get(ctx, s.Prefix()+"a").Err(); err == nil || !strings.Contains(err.Error(), "rueidisadapter.AddHook") {
		t.Errorf("a call after the client's own AddHook: %v, want an error naming rueidisadapter.AddHook", err)
	}
	if _, err := c.Pipelined(ctx, func(p redis.Pipeliner) error { p.Get(ctx, s.Prefix()+"a"); return nil }); err == nil {
		t.Error("a pipeline after the client's own AddHook succeeded without the hook")
	}
}
