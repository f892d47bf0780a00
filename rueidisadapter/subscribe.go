package rueidisadapter

import (
	"context"

	"github.com/redis/rueidis"
)

// Subscribe subscribes to channel on a dedicated rueidis connection, for
// lock's and semaphore's release notifications (luascripts.Adapter). wake
// receives a value when the subscription is in effect and on each
// message; a subscription that fails sends nothing, and the waiter falls
// back to its backoff, as on go-redis. On a Cluster it subscribes on one
// node: a message published on any node reaches every node's subscribers.
func (a *adapter) Subscribe(ctx context.Context, channel string) (<-chan any, func()) {
	wake := make(chan any, 1)
	notify := func(v any) {
		select {
		case wake <- v:
		default: // a wake-up is waiting already
		}
	}
	rc := a.rc
	if a.cluster {
		for _, node := range a.rc.Nodes() {
			rc = node
			break
		}
	}
	dc, cancel := rc.Dedicate()
	done := dc.SetPubSubHooks(rueidis.PubSubHooks{
		OnMessage: func(m rueidis.PubSubMessage) { notify(m) },
		OnSubscription: func(s rueidis.PubSubSubscription) {
			if s.Kind == "subscribe" {
				notify(s)
			}
		},
	})
	stop := func() {
		cancel() // unsubscribes, and ends the hooks
		<-done
	}
	if err := dc.Do(ctx, dc.B().Subscribe().Channel(channel).Build()).Error(); err != nil {
		stop()
		return nil, func() {}
	}
	return wake, stop
}
