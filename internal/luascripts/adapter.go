package luascripts

import (
	"context"
	"runtime"
	"sync"
	"weak"

	"github.com/redis/go-redis/v9"
)

// The primitives take go-redis clients. A client adapter module
// (rueidisadapter, valkeyadapter) makes a *redis.Client whose hook sends
// every command through another client instead, so that each primitive
// runs its one tested code path on it. What go-redis's types cannot carry
// through such a client (a subscription, whether it routes by slot), the
// adapter registers here with the client it made, and the primitives look
// it up.

// An Adapter is what a client adapter registers for the *redis.Client it
// made.
type Adapter interface {
	// Subscribe subscribes to channel. wake receives a value once the
	// subscription is in effect and on each message, as go-redis's
	// ChannelWithSubscriptions does (a value may be dropped while one is
	// waiting: each is only a wake-up); a subscription that fails sends
	// nothing. stop ends the subscription; it returns once nothing more
	// is sent on wake.
	Subscribe(ctx context.Context, channel string) (wake <-chan any, stop func())
	// Cluster reports whether the client is a Redis Cluster client, which
	// routes each command by its first key's slot and follows MOVED and
	// ASK itself.
	Cluster() bool
}

// adapters maps the clients adapters made to their Adapter. A client's
// entry goes when the client is collected: an Adapter must not refer to
// its client.
var adapters sync.Map // weak.Pointer[redis.Client] -> Adapter

// Register records a as the Adapter of c, a client an adapter made.
func Register(c *redis.Client, a Adapter) {
	key := weak.Make(c)
	adapters.Store(key, a)
	runtime.AddCleanup(c, func(key weak.Pointer[redis.Client]) { adapters.Delete(key) }, key)
}

// AdapterOf returns the Adapter registered for client, or nil for a
// client no adapter made.
func AdapterOf(client any) Adapter {
	c, ok := client.(*redis.Client)
	if !ok || c == nil {
		return nil
	}
	a, ok := adapters.Load(weak.Make(c))
	if !ok {
		return nil
	}
	return a.(Adapter)
}

// A Subscriber is a client that can subscribe: every go-redis client.
type Subscriber interface {
	Subscribe(ctx context.Context, channels ...string) *redis.PubSub
}

// Subscribe subscribes client to channel for wake-ups: wake receives a
// value once the subscription is in effect and on each message. stop ends
// the subscription and returns once nothing more is sent on wake. It is
// go-redis's Subscribe, or an adapter's.
func Subscribe(ctx context.Context, client Subscriber, channel string) (wake <-chan any, stop func()) {
	if a := AdapterOf(client); a != nil {
		return a.Subscribe(ctx, channel)
	}
	ps := client.Subscribe(ctx, channel)
	events := ps.ChannelWithSubscriptions(redis.WithChannelHealthCheckInterval(0))
	return events, func() {
		_ = ps.Close()
		// go-redis's reader may be blocked handing over a notification
		// (for up to a minute once the channel's buffer is full, as it is
		// when many releases came while the waiter was busy). Draining
		// frees it; it closes the channel once it sees the subscription
		// closed.
		for range events {
		}
	}
}
