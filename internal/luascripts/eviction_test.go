package luascripts_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

func infoCalls(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	stats, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(stats, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_info:calls="); ok {
			n, _, _ := strings.Cut(v, ",")
			calls, err := strconv.Atoi(n)
			if err != nil {
				t.Fatal(err)
			}
			return calls
		}
	}
	return 0
}

func TestAnAllkeysPolicyIsRefusedAndAConfigSetIsSeenWithinTheRecheck(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--maxmemory-policy", "allkeys-lru"))
	rdb := s.Client(t)
	c := goredisadapter.New(rdb)
	ctx := context.Background()
	p := &luascripts.Policy{Recheck: 50 * time.Millisecond}
	err := p.Check(ctx, c)
	if !errors.Is(err, luascripts.ErrEvictingPolicy) || !strings.Contains(err.Error(), "allkeys-lru") {
		t.Fatalf("Check on allkeys-lru = %v, want ErrEvictingPolicy naming the policy", err)
	}
	if err := rdb.ConfigSet(ctx, "maxmemory-policy", "volatile-lru").Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for p.Check(ctx, c) != nil {
		if time.Now().After(deadline) {
			t.Fatal("volatile-lru still refused 5 s after CONFIG SET, with a 50 ms recheck")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestConcurrentFirstChecksReadThePolicyOnce(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	rdb := s.Client(t)
	c := goredisadapter.New(rdb)
	before := infoCalls(t, rdb)
	var p luascripts.Policy
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- p.Check(context.Background(), c)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Check on noeviction: %v", err)
		}
	}
	// infoCalls itself is one INFO call, counted in the second reading.
	if after := infoCalls(t, rdb); after != before+2 {
		t.Fatalf("INFO calls %d before, %d after 50 concurrent first checks; want one read (+1 for the count itself)", before, after)
	}
}

func TestAServerThatRefusesINFOIsNotRefused(t *testing.T) {
	s := redistest.Start(t, redistest.Own(), redistest.Args("--maxmemory-policy", "allkeys-lru"))
	admin := s.Client(t)
	ctx := context.Background()
	if err := admin.Do(ctx, "ACL", "SETUSER", "noinfo", "on", ">pw", "~*", "&*", "+@all", "-info").Err(); err != nil {
		t.Fatal(err)
	}
	rdb := s.Client(t, func(o *redis.Options) { o.Username, o.Password = "noinfo", "pw" })
	var p luascripts.Policy
	if err := p.Check(ctx, goredisadapter.New(rdb)); err != nil {
		t.Fatalf("Check with INFO refused = %v, want nil: the policy is unknown, Preflight reports it", err)
	}
}

func TestAFailedFirstReadIsTheCallsError(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	rdb := s.Client(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var p luascripts.Policy
	if err := p.Check(ctx, goredisadapter.New(rdb)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Check with a canceled context = %v, want context.Canceled", err)
	}
}
