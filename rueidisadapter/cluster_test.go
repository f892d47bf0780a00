package rueidisadapter_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
	"github.com/redis-primitives/go/rueidisadapter"
)

var (
	echoKey = luascripts.New("echo", "return KEYS[1] or 'none'")
	echoRO  = luascripts.NewReadOnly("echo-ro", "#!lua flags=no-writes\nreturn KEYS[1] or 'none'")
	noAsk   = luascripts.NewWithoutAsk("noask", "return KEYS[1]")
)

// On a Cluster, rueidis routes each call by its first key's slot: one
// batch with keys of every node, a call without keys among them (which
// rueidis would refuse to mix with several slots) and a read-only call,
// each runs, in its node; locks acquire on names of every node; a waiter
// wakes on a release published on another node; WAIT counts the replica
// of the write's node; and Primary says it cannot tell.
func TestOnAClusterEveryCallReachesItsKeysNode(t *testing.T) {
	cl := redistest.StartCluster(t)
	rc := newRueidis(t, rueidis.ClientOption{InitAddress: addrs(cl.Nodes()...), Dialer: dialer(redistest.ClusterNodeTimeout)})
	c := rueidisadapter.New(rc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	var calls []luascripts.Call
	for i := range 40 {
		s := echoKey
		if i%3 == 0 {
			s = echoRO
		}
		calls = append(calls, luascripts.Call{Script: s, Keys: []string{"adapter:" + strconv.Itoa(i)}})
		if i == 20 {
			calls = append(calls, luascripts.Call{Script: echoKey})
		}
	}
	luascripts.Send(ctx, c, calls)
	for _, call := range calls {
		want := "none"
		if len(call.Keys) > 0 {
			want = call.Keys[0]
		}
		if got, err := call.Result().Text(); got != want || err != nil {
			t.Errorf("call on %v: %q, %v; want %q", call.Keys, got, err, want)
		}
	}

	if _, err := c.Primary(ctx, "k"); !errors.Is(err, luascripts.ErrNoRoute) {
		t.Errorf("Primary on a Cluster: %v, want ErrNoRoute", err)
	}

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
	time.Sleep(200 * time.Millisecond) // let the waiter subscribe; its backoff is 10 s
	if _, err := l.Release(ctx, held); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-woke:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter did not wake within 5 s of the release (its fallback backoff is 10 s): no notification")
	}

	set := luascripts.New("set", "return redis.call('SET', KEYS[1], 'v')")
	for i := range 6 {
		key := "adapter:wait:" + strconv.Itoa(i)
		r, acked, err := set.RunWait(ctx, c, []string{key}, nil, 1, 5*time.Second)
		if r.Err != nil || err != nil || acked != 1 {
			t.Errorf("RunWait on %s: %v, %v; acked %d, want 1", key, r.Err, err, acked)
		}
	}
}

// A script without ASK (ratelimit's batch.lua) never follows one: while
// its key's slot migrates, its call ends with the ASK, in a batch too,
// where the others run, following their ASK.
func TestOnAClusterANoAskCallEndsWithTheASKOthersFollow(t *testing.T) {
	cl := redistest.StartCluster(t)
	c := rueidisadapter.New(newRueidis(t, rueidis.ClientOption{InitAddress: addrs(cl.Nodes()...), Dialer: dialer(redistest.ClusterNodeTimeout)}))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const key = "adapter:asked"
	cl.BeginSlotMigration(t, key) // the key is on neither node: every call on it is asked

	calls := []luascripts.Call{
		{Script: echoKey, Keys: []string{"adapter:other:1"}},
		{Script: noAsk, Keys: []string{key}},
		{Script: echoKey, Keys: []string{key}},
		{Script: noAsk, Keys: []string{"adapter:other:2"}},
		{Script: echoKey, Keys: []string{"adapter:other:3"}},
	}
	c.Eval(ctx, calls)
	for i, call := range calls {
		msg, _ := luascripts.ReplyMessage(call.Err)
		switch {
		case call.Script == noAsk && call.Keys[0] == key:
			if !strings.HasPrefix(msg, "ASK ") {
				t.Errorf("call %d, NoAsk on the migrating key: %v, %v; want the ASK", i, call.Reply, call.Err)
			}
		case call.Err != nil && !strings.HasPrefix(msg, "NOSCRIPT"):
			t.Errorf("call %d (%s on %s): %v", i, call.Script.Name(), call.Keys[0], call.Err)
		}
	}
	one := []luascripts.Call{{Script: noAsk, Keys: []string{key}}}
	luascripts.Send(ctx, c, one)
	if msg, _ := luascripts.ReplyMessage(one[0].Err); !strings.HasPrefix(msg, "ASK ") {
		t.Errorf("a NoAsk call alone on the migrating key: %v, %v; want the ASK", one[0].Reply, one[0].Err)
	}
	if r := echoKey.Run(ctx, c, []string{key}); r.Err != nil {
		t.Errorf("a call on the migrating key: %v, want it to follow the ASK", r.Err)
	}
}
