package robustness

import (
	"flag"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/rueidisadapter"
	"github.com/redis-primitives/go/valkeyadapter"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/valkey-io/valkey-go"
)

// The clients the primitives run on, through their adapters. Each run of a
// scenario takes the next of -clients in turn, and each scenario starts
// one further along, so that even the smoke (one run per scenario) runs on
// every client.
var clients = flag.String("clients", "go-redis,rueidis,valkey-go", "the clients the runs take in turn, comma-separated")

func clientNames() []string { return strings.Split(*clients, ",") }

// endpoint is what a client connects to: one server, a Cluster's nodes, or
// a Sentinel-monitored primary. rdb, when set, is go-redis's client of it.
type endpoint struct {
	addr     string
	cluster  *redistest.Cluster
	sentinel *redistest.Sentinel
	rdb      redis.UniversalClient
}

// connect returns a client of e, with the client's defaults but for what
// a service on a failover deployment sets: dial and write timeouts of about
// the failover's detection, and no client-side cache (the primitives use
// none). It is closed when t ends.
func connect(t *testing.T, name string, e endpoint) luascripts.Client {
	t.Helper()
	var addrs []string
	timeout := time.Duration(0)
	switch {
	case e.sentinel != nil:
		addrs, timeout = e.sentinel.SentinelAddrs(), redistest.SentinelDownAfter
	case e.cluster != nil:
		for _, n := range e.cluster.Nodes() {
			addrs = append(addrs, n.Addr())
		}
		timeout = redistest.ClusterNodeTimeout
	default:
		addrs = []string{e.addr}
	}
	single := e.sentinel == nil && e.cluster == nil
	switch name {
	case "go-redis":
		rdb := e.rdb
		if rdb == nil {
			c := redis.NewClient(&redis.Options{Addr: e.addr, ContextTimeoutEnabled: true, DisableIdentity: true})
			t.Cleanup(func() { _ = c.Close() })
			rdb = c
		}
		return goredisadapter.New(rdb)
	case "rueidis":
		o := rueidis.ClientOption{InitAddress: addrs, DisableCache: true, ForceSingleClient: single,
			Dialer: net.Dialer{Timeout: timeout}, ConnWriteTimeout: timeout}
		if e.sentinel != nil {
			o.Sentinel = rueidis.SentinelOption{MasterSet: e.sentinel.MasterName(), Dialer: o.Dialer}
		}
		c, err := rueidis.NewClient(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return rueidisadapter.New(c)
	case "valkey-go":
		o := valkey.ClientOption{InitAddress: addrs, DisableCache: true, ForceSingleClient: single,
			Dialer: net.Dialer{Timeout: timeout}, ConnWriteTimeout: timeout}
		if e.sentinel != nil {
			o.Sentinel = valkey.SentinelOption{MasterSet: e.sentinel.MasterName(), Dialer: o.Dialer}
		}
		c, err := valkey.NewClient(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return valkeyadapter.New(c)
	}
	t.Fatalf("-clients: no client %q (go-redis, rueidis, valkey-go)", name)
	return nil
}
