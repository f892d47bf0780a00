package clienttest_test

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/valkey-io/valkey-go"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/rueidisadapter"
	"github.com/redis-primitives/go/valkeyadapter"
)

func init() { kinds = append(kinds, rueidisKind, valkeyKind) }

// rueidisKind is rueidis with its defaults, but for DisableCache (the
// primitives use no client-side caching, which also needs RESP3 and
// CLIENT TRACKING) and the target's own options. Each connection is
// dialled before the test uses the client (dialEveryConnection).
var rueidisKind = kind{name: "rueidis", client: func(t testing.TB, tg target) luascripts.Client {
	t.Helper()
	o := rueidis.ClientOption{
		InitAddress:       tg.addrs,
		Username:          tg.username,
		Password:          tg.password,
		Dialer:            net.Dialer{Timeout: tg.timeout},
		ConnWriteTimeout:  tg.timeout,
		DisableCache:      true,
		ForceSingleClient: !tg.cluster && tg.sentinel == nil,
	}
	if tg.dial != nil {
		o.DialCtxFn = func(ctx context.Context, addr string, _ *net.Dialer, _ *tls.Config) (net.Conn, error) {
			return tg.dial(ctx, "tcp", addr)
		}
	}
	if tg.sentinel != nil {
		o.InitAddress = tg.sentinel.SentinelAddrs()
		o.Sentinel = rueidis.SentinelOption{MasterSet: tg.sentinel.MasterName(), Dialer: o.Dialer}
	}
	rc, err := rueidis.NewClient(o)
	if rc == nil { // a client of one server comes with its first dial's error (a wrong password), which its calls return
		t.Fatalf("clienttest: rueidis client of %+v: %v", tg, err)
	}
	t.Cleanup(rc.Close)
	var nodes []func(context.Context)
	for _, n := range rc.Nodes() {
		nodes = append(nodes, func(ctx context.Context) { n.Do(ctx, n.B().Exists().Key("clienttest:dial").Build()) })
	}
	dialEveryConnection(nodes)
	return rueidisadapter.New(rc)
}}

// valkeyKind is valkey-go, the Valkey project's fork of rueidis, made as
// rueidisKind is.
var valkeyKind = kind{name: "valkey-go", client: func(t testing.TB, tg target) luascripts.Client {
	t.Helper()
	o := valkey.ClientOption{
		InitAddress:       tg.addrs,
		Username:          tg.username,
		Password:          tg.password,
		Dialer:            net.Dialer{Timeout: tg.timeout},
		ConnWriteTimeout:  tg.timeout,
		DisableCache:      true,
		ForceSingleClient: !tg.cluster && tg.sentinel == nil,
	}
	if tg.dial != nil {
		o.DialCtxFn = func(ctx context.Context, addr string, _ *net.Dialer, _ *tls.Config) (net.Conn, error) {
			return tg.dial(ctx, "tcp", addr)
		}
	}
	if tg.sentinel != nil {
		o.InitAddress = tg.sentinel.SentinelAddrs()
		o.Sentinel = valkey.SentinelOption{MasterSet: tg.sentinel.MasterName(), Dialer: o.Dialer}
	}
	vc, err := valkey.NewClient(o)
	if vc == nil { // a client of one server comes with its first dial's error (a wrong password), which its calls return
		t.Fatalf("clienttest: valkey-go client of %+v: %v", tg, err)
	}
	t.Cleanup(vc.Close)
	var nodes []func(context.Context)
	for _, n := range vc.Nodes() {
		nodes = append(nodes, func(ctx context.Context) { n.Do(ctx, n.B().Exists().Key("clienttest:dial").Build()) })
	}
	dialEveryConnection(nodes)
	return valkeyadapter.New(vc)
}}

// dialEveryConnection makes a client open each of the connections it
// multiplexes calls over, as a service's client has after a while in use,
// by 64 concurrent calls of each of its nodes. rueidis and valkey-go send
// each keyed call over one of several connections to a server (2 to 4
// here: log2 of GOMAXPROCS, at most 4) chosen at random, and dial that one
// on its first call: a test that freezes the server after a few calls
// would otherwise see a timed-out call held in the handshake of a
// connection dialled to the frozen server, never written, where it meant
// one written before its deadline that the server runs when it wakes. 64
// concurrent calls miss one of 4 connections with a chance of
// 4·(3/4)^64, about 4·10⁻⁸. The calls' outcomes do not matter (a
// replica's MOVED, an ACL user's NOPERM still came over a connection).
func dialEveryConnection(nodes []func(context.Context)) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, call := range nodes {
		for range 64 {
			wg.Go(func() { call(ctx) })
		}
	}
	wg.Wait()
}
