package clienttest_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// A target is what a test connects a client to, and the few options a
// test sets; everything else is the client's default, as a service would
// run it.
type target struct {
	addrs    []string            // one server, or a Cluster's nodes (with cluster)
	cluster  bool                // addrs are a Cluster's nodes
	sentinel *redistest.Sentinel // a Sentinel-monitored primary, instead of addrs

	username, password string
	// dial, when set, makes each connection (a test's faulty net.Conn).
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// timeout, when set, bounds dials, reads and writes: a Cluster's or a
	// Sentinel's test gives up on a dead node in about its failover time.
	timeout time.Duration
}

// A kind is one Redis client, through its adapter.
type kind struct {
	name string
	// client returns a client of tg, closed when t ends.
	client func(t testing.TB, tg target) luascripts.Client
}

// kinds are the clients every test here runs on.
var kinds = []kind{goRedis}

// eachClient runs f once per kind, each in a subtest named after it, in
// parallel with the others.
func eachClient(t *testing.T, f func(t *testing.T, k kind)) {
	t.Helper()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			f(t, k)
		})
	}
}

// eachClientLong is eachClient for a long fault run (a history of
// failovers or migrations, ten seconds and more per client): the test runs
// in parallel with the other long ones, after the short ones, so that the
// module takes about its longest run, not the sum of them. They wait on
// failovers far more than they compute.
func eachClientLong(t *testing.T, f func(t *testing.T, k kind)) {
	t.Helper()
	t.Parallel()
	eachClient(t, f)
}

// server returns a client of s.
func (k kind) server(t testing.TB, s *redistest.Server) luascripts.Client {
	return k.client(t, target{addrs: []string{s.Addr()}})
}

// cluster returns a client of every node of c.
func (k kind) cluster(t testing.TB, c *redistest.Cluster) luascripts.Client {
	tg := target{cluster: true, timeout: redistest.ClusterNodeTimeout}
	for _, n := range c.Nodes() {
		tg.addrs = append(tg.addrs, n.Addr())
	}
	return k.client(t, tg)
}

// failover returns a client of the primary s monitors.
func (k kind) failover(t testing.TB, s *redistest.Sentinel) luascripts.Client {
	return k.client(t, target{sentinel: s, timeout: redistest.SentinelDownAfter})
}

// goRedis is go-redis with its defaults, but for ContextTimeoutEnabled,
// which the README asks of every go-redis user.
var goRedis = kind{name: "go-redis", client: func(t testing.TB, tg target) luascripts.Client {
	t.Helper()
	var rdb redis.UniversalClient
	switch {
	case tg.sentinel != nil:
		o := tg.sentinel.FailoverOptions()
		o.Username, o.Password, o.Dialer = tg.username, tg.password, tg.dial
		rdb = redis.NewFailoverClient(o)
	case tg.cluster:
		rdb = redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: tg.addrs, Username: tg.username, Password: tg.password, Dialer: tg.dial,
			ContextTimeoutEnabled: true, DisableIdentity: true,
			DialTimeout: tg.timeout, ReadTimeout: tg.timeout, WriteTimeout: tg.timeout,
		})
	default:
		rdb = redis.NewClient(&redis.Options{
			Addr: tg.addrs[0], Username: tg.username, Password: tg.password, Dialer: tg.dial,
			ContextTimeoutEnabled: true, DisableIdentity: true,
			DialTimeout: tg.timeout, ReadTimeout: tg.timeout, WriteTimeout: tg.timeout,
		})
	}
	t.Cleanup(func() { _ = rdb.Close() })
	return goredisadapter.New(rdb)
}}
