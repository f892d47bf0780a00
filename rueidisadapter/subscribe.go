package rueidisadapter

import (
	"context"
	"sync"

	"github.com/redis/rueidis"
)

// Subscribe subscribes to channel on a dedicated connection with
// PubSubHooks: the subscription's confirmation is the first wake-up, each
// message another. On a Cluster the connection goes to any node: a message
// published on any node reaches every node's subscribers. See
// luascripts.Client.
//
// stop closes the connection rather than unsubscribe on it and give it
// back to rueidis's pool: an UNSUBSCRIBE to a server that stopped
// answering would wait for ConnWriteTimeout, a close at most a second.
func (c *Client) Subscribe(ctx context.Context, channel string) (<-chan struct{}, func()) {
	wake := make(chan struct{}, 1)
	var (
		mu      sync.Mutex // orders the wake-ups before stop's end
		stopped bool
	)
	notify := func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		select {
		case wake <- struct{}{}:
		default: // a wake-up is waiting already
		}
	}
	dc, _ := c.rc.Dedicate() // released by Close
	dc.SetPubSubHooks(rueidis.PubSubHooks{
		OnMessage: func(rueidis.PubSubMessage) { notify() },
		OnSubscription: func(s rueidis.PubSubSubscription) {
			if s.Kind == "subscribe" {
				notify()
			}
		},
	})
	var once sync.Once
	stop := func() {
		once.Do(func() {
			mu.Lock()
			stopped = true
			mu.Unlock()
			dc.Close()
		})
	}
	if err := dc.Do(ctx, dc.B().Subscribe().Channel(channel).Build()).Error(); err != nil {
		// Failed, as far as the caller knows: nothing is sent, not even
		// a confirmation that came as ctx ended.
		stop()
		select {
		case <-wake:
		default:
		}
		return wake, func() {}
	}
	return wake, stop
}
