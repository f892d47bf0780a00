package clienttest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// Preflight reads the server's version, its eviction policy and its
// persistence through the client, and warns about a setting that loses
// locks or fencing tokens. A client that misread them (a map's first
// value, the wrong parameter, an empty string for one the server does not
// report) would have Preflight approve an allkeys-lru server; Time is a
// lease's clock. Each is checked against what go-redis reads.
func TestConformanceInfoConfigGetAndTimeReadWhatTheServerSays(t *testing.T) {
	eachClient(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t, redistest.Own(), redistest.Args("--maxmemory-policy", "allkeys-lru", "--appendonly", "yes"))
		rdb := srv.Client(t)
		c := k.server(t, srv)
		ctx := confCtx(t)

		for _, name := range []string{"maxmemory-policy", "appendonly", "save"} {
			want, err := rdb.ConfigGet(context.Background(), name).Result()
			if err != nil {
				t.Fatal(err)
			}
			if got, err := c.ConfigGet(ctx, name); err != nil || got != want[name] {
				t.Errorf("ConfigGet(%q): %q, %v; want %q, as go-redis reads it", name, got, err, want[name])
			}
		}
		if policy, aof, _, err := luascripts.Durability(ctx, c); err != nil || policy != "allkeys-lru" || !aof {
			t.Errorf("Durability: %q, appendonly %v, %v; want allkeys-lru, true", policy, aof, err)
		}
		if v, err := c.ConfigGet(ctx, "no-such-parameter"); err == nil {
			t.Errorf("ConfigGet of a parameter the server does not have: %q, nil; want an error", v)
		}
		if v, err := c.ConfigGet(ctx, "maxmemory-*"); err == nil {
			t.Errorf("ConfigGet of a pattern (several parameters, none named so): %q, nil; want an error", v)
		}

		info, err := c.Info(ctx, "server")
		if err != nil || !strings.Contains(info, "redis_version:") {
			t.Errorf("Info(server): %.80q, %v; want redis_version in it", info, err)
		}
		server, err := rdb.Info(context.Background(), "server").Result()
		if err != nil {
			t.Fatal(err)
		}
		if v, ok, err := luascripts.ServerVersion(ctx, c); err != nil || !ok || v == "" || !strings.Contains(server, "redis_version:"+v+"\r\n") {
			t.Errorf("ServerVersion: %q, %v, %v; want the version go-redis reads, and true", v, ok, err)
		}

		before := time.Now()
		now, err := c.Time(ctx)
		after := time.Now()
		if err != nil || now.Before(before.Add(-time.Second)) || now.After(after.Add(time.Second)) {
			t.Errorf("Time: %v, %v; want within a second of the local clock (%v..%v): the same machine", now, err, before, after)
		}
	})
}
