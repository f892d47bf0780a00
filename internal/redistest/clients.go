package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/valkey-io/valkey-go"
	"go.uber.org/goleak"

	"github.com/redis-primitives/go/rueidisadapter"
	"github.com/redis-primitives/go/valkeyadapter"
)

// The client the fixtures' Client methods make is the one REDISTEST_CLIENT
// names: go-redis (the default, or empty), rueidis or valkey (valkey-go),
// whose clients are wrapped by rueidisadapter and valkeyadapter: scripts/test.sh runs the primitives' suites
// once more with each adapter, so that each guarantee is also tested on
// the other client. The go-redis options a test tunes are carried over
// where the other client has them (address, user, password, database,
// dial and write timeouts, MaxRetries -1 as no retries); the rest (pool
// sizes, the number of retries) are go-redis's own, and a test about them
// is go-redis's only (see GoRedisOnly).

// ClientKind returns the client REDISTEST_CLIENT names: "go-redis",
// "rueidis" or "valkey".
func ClientKind() string {
	switch k := os.Getenv("REDISTEST_CLIENT"); k {
	case "", "go-redis":
		return "go-redis"
	default:
		return k
	}
}

// GoRedisOnly skips t unless the fixtures make go-redis clients: t tests
// go-redis's own options or hooks (retries, pool size, AddHook), which an
// adapter's client does not have. why says which.
func GoRedisOnly(t testing.TB, why string) {
	t.Helper()
	if k := ClientKind(); k != "go-redis" {
		t.Skipf("REDISTEST_CLIENT=%s: %s is go-redis's own", k, why)
	}
}

// newClient returns the client of opt that REDISTEST_CLIENT names, closed
// when t ends.
func newClient(t testing.TB, opt *redis.Options) *redis.Client {
	t.Helper()
	if ClientKind() == "go-redis" {
		c := redis.NewClient(opt)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	return adapted(t, rueidis.ClientOption{
		InitAddress:       []string{opt.Addr},
		Username:          opt.Username,
		Password:          opt.Password,
		SelectDB:          opt.DB,
		Dialer:            dialer(opt.DialTimeout),
		ConnWriteTimeout:  opt.WriteTimeout,
		DisableRetry:      opt.MaxRetries < 0,
		ForceSingleClient: true,
	})
}

// newFailoverClient is newClient for a Sentinel-monitored primary.
func newFailoverClient(t testing.TB, opt *redis.FailoverOptions) *redis.Client {
	t.Helper()
	if ClientKind() == "go-redis" {
		c := redis.NewFailoverClient(opt)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	return adapted(t, rueidis.ClientOption{
		InitAddress:      opt.SentinelAddrs,
		Username:         opt.Username,
		Password:         opt.Password,
		SelectDB:         opt.DB,
		Dialer:           dialer(opt.DialTimeout),
		ConnWriteTimeout: opt.WriteTimeout,
		DisableRetry:     opt.MaxRetries < 0,
		Sentinel: rueidis.SentinelOption{
			MasterSet: opt.MasterName,
			Username:  opt.SentinelUsername,
			Password:  opt.SentinelPassword,
			Dialer:    dialer(opt.DialTimeout),
		},
	})
}

// adapted returns the adapter's go-redis client of a client made with o,
// both closed when t ends.
func adapted(t testing.TB, o rueidis.ClientOption) *redis.Client {
	t.Helper()
	o.DisableCache = true // client-side caching is not what the primitives use
	var (
		c   *redis.Client
		err error
	)
	switch k := ClientKind(); k {
	case "rueidis":
		var rc rueidis.Client
		if rc, err = rueidis.NewClient(o); err == nil {
			t.Cleanup(rc.Close)
			c, err = rueidisadapter.New(rc)
		}
	case "valkey":
		var vc valkey.Client
		if vc, err = valkey.NewClient(valkeyOption(o)); err == nil {
			t.Cleanup(vc.Close)
			c, err = valkeyadapter.New(vc)
		}
	default:
		err = fmt.Errorf("REDISTEST_CLIENT=%s: not a client the fixtures know (go-redis, rueidis, valkey)", k)
	}
	if err != nil {
		t.Fatalf("redistest: %s client: %v", ClientKind(), err)
	}
	t.Cleanup(func() { _ = c.Close() })
	dialEveryConnection(c)
	return c
}

// dialEveryConnection makes c's client open each of the connections it
// multiplexes calls over, as a service's client has after a while in use.
// rueidis and valkey-go send each keyed call over one of several
// connections (2 to 4 here: log2 of GOMAXPROCS, at most 4) chosen at
// random, and dial that one on its first call: a test that freezes the
// server after a few calls would otherwise see a timed-out call held in
// the handshake of a connection dialed to the frozen server, never
// written, where it meant one written before its deadline that the server
// runs when it wakes. 64 concurrent calls miss one of 4 connections with a
// chance of 4·(3/4)^64, about 4·10⁻⁸. An error reply (an ACL user's
// NOPERM) still came over a connection; errors are not the point here.
func dialEveryConnection(c *redis.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.Exists(ctx, "redistest:dial").Err()
		}()
	}
	wg.Wait()
}

// valkeyOption is o for valkey-go, whose options are rueidis's.
func valkeyOption(o rueidis.ClientOption) valkey.ClientOption {
	return valkey.ClientOption{
		InitAddress:       o.InitAddress,
		Username:          o.Username,
		Password:          o.Password,
		SelectDB:          o.SelectDB,
		Dialer:            o.Dialer,
		ConnWriteTimeout:  o.ConnWriteTimeout,
		DisableRetry:      o.DisableRetry,
		ForceSingleClient: o.ForceSingleClient,
		DisableCache:      o.DisableCache,
		Sentinel: valkey.SentinelOption{
			MasterSet: o.Sentinel.MasterSet,
			Username:  o.Sentinel.Username,
			Password:  o.Sentinel.Password,
			Dialer:    o.Sentinel.Dialer,
		},
	}
}

// dialer is a dialer with go-redis's dial timeout (5 s when unset).
func dialer(timeout time.Duration) net.Dialer {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	return net.Dialer{Timeout: timeout}
}

// AddHook adds h to c as go-redis's AddHook does: on an adapter's client,
// with the adapter's AddHook, which runs h around the adapter's calls (the
// client's own AddHook cannot).
func AddHook(c *redis.Client, h redis.Hook) {
	switch ClientKind() {
	case "rueidis":
		if err := rueidisadapter.AddHook(c, h); err == nil {
			return
		}
	case "valkey":
		if err := valkeyadapter.AddHook(c, h); err == nil {
			return
		}
	}
	c.AddHook(h)
}

// ClientGoroutines are goleak options that ignore the goroutines an
// adapter's client keeps for each of its connections (rueidis's and
// valkey-go's pipes read and write in goroutines of their own, which last
// until the client closes): a test that checks that a primitive leaves no
// goroutine behind ignores them, as it ignores go-redis's pooled
// connections, which need none.
func ClientGoroutines() []goleak.Option {
	var opts []goleak.Option
	for _, pkg := range []string{"github.com/redis/rueidis", "github.com/valkey-io/valkey-go"} {
		opts = append(opts,
			goleak.IgnoreAnyFunction(pkg+".(*pipe)._background"),
			goleak.IgnoreAnyFunction(pkg+".(*pipe)._background.func1"))
	}
	return opts
}

// PrimitiveClient returns the client the primitives under test run on: a
// cluster client as Client makes it, or, under REDISTEST_CLIENT, the
// adapter's client of a rueidis (or valkey-go) Cluster client of every
// node; closed when t ends. Tests of go-redis's own cluster client
// (MasterForKey, ForEachMaster, its pipelines) use Client.
func (c *Cluster) PrimitiveClient(t testing.TB) redis.UniversalClient {
	t.Helper()
	if ClientKind() == "go-redis" {
		return c.Client(t)
	}
	o := rueidis.ClientOption{Dialer: dialer(ClusterNodeTimeout), ConnWriteTimeout: ClusterNodeTimeout}
	for _, n := range c.nodes {
		o.InitAddress = append(o.InitAddress, n.addr)
	}
	return adapted(t, o)
}

// lingerAfterClose is how long a closed rueidis or valkey-go client's own
// goroutines may outlive it: those that close connections a Cluster
// client's slot-table refresh or a redirect replaced, or that send a
// delayed refresh, sleep up to 5 s first, then end by themselves.
const lingerAfterClose = 6 * time.Second

// lingering reports whether err, goleak's, names goroutines of rueidis or
// valkey-go, which may still be ending on their own (lingerAfterClose).
func lingering(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "github.com/redis/rueidis.") || strings.Contains(msg, "github.com/valkey-io/valkey-go.")
}
