package fence_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

// Bad input must fail with a typed error before any round trip: the server
// ends up with no key and no script call.
func TestBadInputGetsTypedErrorAndTouchesNothing(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	c := s.Client(t)
	client := goredisadapter.New(c)
	ctx := context.Background()

	if _, err := fence.New(nil); !errors.Is(err, fence.ErrNilClient) {
		t.Errorf("New(nil) = %v, want ErrNilClient", err)
	}
	if _, err := fence.New(goredisadapter.New((*redis.Client)(nil))); !errors.Is(err, fence.ErrNilClient) {
		t.Errorf("New(goredisadapter.New(typed nil)) = %v, want ErrNilClient", err)
	}
	if _, err := fence.New((*goredisadapter.Client)(nil)); !errors.Is(err, fence.ErrNilClient) {
		t.Errorf("New(typed nil) = %v, want ErrNilClient", err)
	}
	for _, scope := range []string{"", "a{b", "a}b"} {
		if _, err := fence.New(client, fence.WithScope(scope)); !errors.Is(err, fence.ErrInvalidOption) {
			t.Errorf("WithScope(%q) = %v, want ErrInvalidOption", scope, err)
		}
	}
	if _, err := fence.New(client, nil); !errors.Is(err, fence.ErrInvalidOption) {
		t.Errorf("nil option = %v, want ErrInvalidOption", err)
	}

	store, err := fence.New(client)
	if err != nil {
		t.Fatal(err)
	}
	scoped, err := fence.New(client, fence.WithScope("job"))
	if err != nil {
		t.Fatal(err)
	}
	var nilStore *fence.Store
	var zero fence.Fencer
	eval := func(st *fence.Store, token int64, script string, keys ...string) error {
		_, err := st.Eval(ctx, token, script, keys)
		return err
	}
	const w = "redis.call('SET', KEYS[2], 'x')"
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"token 0", store.Set(ctx, 0, "k", "v"), fence.ErrInvalidToken},
		{"negative token", store.HSet(ctx, -1, "k", "f", "v"), fence.ErrInvalidToken},
		{"token above 2^53", store.Set(ctx, 1<<53+1, "k", "v"), fence.ErrInvalidToken},
		{"empty key", store.Set(ctx, 1, "", "v"), fence.ErrInvalidKey},
		{"empty hash key", store.HSet(ctx, 1, "", "f", "v"), fence.ErrInvalidKey},
		{"a tagged key's mark", store.Set(ctx, 1, "{k}:fence", "v"), fence.ErrInvalidKey},
		{"an untagged key's mark", store.HSet(ctx, 1, "app:k:fence{app:k}", "f", "v"), fence.ErrInvalidKey},
		{"an untagged key's mark in eval", eval(store, 1, w, "app:k", "app:k:fence{app:k}"), fence.ErrInvalidKey},
		{"the scope's own mark", scoped.Set(ctx, 1, scoped.Key("fence"), "v"), fence.ErrInvalidKey},
		{"'{' without a hash tag", store.Set(ctx, 1, "a{b", "v"), fence.ErrCrossSlot},
		{"'}' without a hash tag", store.Set(ctx, 1, "a}b", "v"), fence.ErrCrossSlot},
		{"scoped key without the tag", scoped.Set(ctx, 1, "cursor", "v"), fence.ErrCrossSlot},
		{"scoped key with another tag", scoped.HSet(ctx, 1, "{other}:cursor", "f", "v"), fence.ErrCrossSlot},
		{"eval empty script", eval(store, 1, " \n", "k"), fence.ErrInvalidScript},
		{"eval no key", eval(store, 1, w), fence.ErrInvalidKey},
		{"eval empty second key", eval(store, 1, w, "{k}", ""), fence.ErrInvalidKey},
		{"eval keys in two slots", eval(store, 1, w, "{a}x", "{b}y"), fence.ErrCrossSlot},
		{"eval untagged keys", eval(store, 1, w, "a", "b"), fence.ErrCrossSlot},
		{"eval bad token", eval(store, 0, w, "k"), fence.ErrInvalidToken},
		{"nil store set", nilStore.Set(ctx, 1, "k", "v"), fence.ErrNilClient},
		{"nil store eval", eval(nilStore, 1, w, "k"), fence.ErrNilClient},
		{"zero fencer set", zero.Set(ctx, "k", "v"), fence.ErrNilClient},
		{"zero fencer hset", zero.HSet(ctx, "k", "f", "v"), fence.ErrNilClient},
		{"fencer with token 0", store.Fencer(0).Set(ctx, "k", "v"), fence.ErrInvalidToken},
		// go-redis stored a nil value as "", rueidis refused it: each
		// client wrote its own way what the doc never allowed.
		{"nil value", store.Set(ctx, 1, "k", nil), fence.ErrInvalidValue},
		{"bool value", store.HSet(ctx, 1, "k", "f", true), fence.ErrInvalidValue},
		{"struct value", store.Fencer(1).Set(ctx, "k", struct{}{}), fence.ErrInvalidValue},
		{"eval nil argument", func() error { _, err := store.Eval(ctx, 1, w, []string{"k"}, "a", nil); return err }(), fence.ErrInvalidValue},
	}
	for _, tc := range cases {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	if _, err := zero.Eval(ctx, w, []string{"k"}); !errors.Is(err, fence.ErrNilClient) {
		t.Errorf("zero fencer eval: %v", err)
	}
	if _, err := store.Get(ctx, ""); !errors.Is(err, fence.ErrInvalidKey) {
		t.Errorf("get empty key: %v", err)
	}
	if _, err := store.HGet(ctx, "", "f"); !errors.Is(err, fence.ErrInvalidKey) {
		t.Errorf("hget empty key: %v", err)
	}
	if _, err := store.Highest(ctx, ""); !errors.Is(err, fence.ErrInvalidKey) {
		t.Errorf("highest empty key: %v", err)
	}
	if _, err := scoped.Highest(ctx, "cursor"); !errors.Is(err, fence.ErrCrossSlot) {
		t.Errorf("highest outside the scope: %v", err)
	}
	if _, err := nilStore.Get(ctx, "k"); !errors.Is(err, fence.ErrNilClient) {
		t.Errorf("nil store get: %v", err)
	}

	// Nothing reached the server: no key, and no script ever ran.
	if n, err := c.DBSize(ctx).Result(); err != nil || n != 0 {
		t.Fatalf("dbsize = %d, %v; bad input wrote something", n, err)
	}
	stats, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stats, "cmdstat_eval") {
		t.Fatalf("bad input made a round trip:\n%s", stats)
	}
}

func TestReadOfMissingKeyReportsNotFound(t *testing.T) {
	store, _, p := newStore(t)
	ctx := context.Background()
	if _, err := store.Get(ctx, p+"{none}"); !errors.Is(err, fence.ErrNotFound) {
		t.Fatalf("get: %v, want ErrNotFound", err)
	}
	if _, err := store.HGet(ctx, p+"{none}", "f"); !errors.Is(err, fence.ErrNotFound) {
		t.Fatalf("hget: %v, want ErrNotFound", err)
	}
	if h := mustHighest(t, store, p+"{none}"); h != 0 {
		t.Fatalf("highest of an unwritten key = %d, want 0", h)
	}
}

func TestCanceledContextIsReported(t *testing.T) {
	store, _, p := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := store.Set(ctx, 1, p+"{k}", "v"); !errors.Is(err, context.Canceled) {
		t.Fatalf("set with a canceled context: %v, want context.Canceled", err)
	}
	if _, err := store.Get(ctx, p+"{k}"); !errors.Is(err, context.Canceled) {
		t.Fatalf("get with a canceled context: %v", err)
	}
}
