package ratelimit

import (
	"container/list"
	"sync"
	"time"
)

// A denyCache remembers rejections until their RetryAfter, so that further
// calls on the same key and rule are answered without a round trip (see
// WithDenyCache). It is exact because a rejected key cannot be admitted
// before its RetryAfter by anything other calls do: they only consume.
// Bounded: at most size entries, the least recently used evicted first; no
// goroutine, expired entries are dropped when met.
type denyCache struct {
	mu    sync.Mutex
	size  int
	items map[string]*list.Element
	order list.List // front: most recently used; values are *denial
}

// A denial is a rejected decision as the server replied it, in µs, with
// the time it was made, so a later answer is the reply shifted by the time
// since: every wait in it shrinks by as much, and nothing else changes
// until the entry expires.
type denial struct {
	id    string
	at    time.Time // when the decision was made (sent, on the real clock)
	until time.Time // at + the earliest time any field would change
	reply []int64   // the script's reply
}

func newDenyCache(size int) *denyCache {
	return &denyCache{size: size, items: make(map[string]*list.Element, size)}
}

// get returns the reply the server would give at now, shifted from the
// cached one, or false.
func (c *denyCache) get(id string, now time.Time) ([]int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[id]
	if !ok {
		return nil, false
	}
	d := e.Value.(*denial)
	if !now.Before(d.until) {
		c.order.Remove(e)
		delete(c.items, id)
		return nil, false
	}
	c.order.MoveToFront(e)
	return shiftReply(d.reply, now.Sub(d.at).Microseconds()), true
}

// put remembers a rejection decided at at, for as long as its answer is
// predictable.
func (c *denyCache) put(id string, at time.Time, reply []int64) {
	life, ok := stableFor(reply)
	if !ok || life <= 0 {
		return
	}
	d := &denial{id: id, at: at, until: at.Add(time.Duration(life) * time.Microsecond), reply: reply}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[id]; ok {
		e.Value = d
		c.order.MoveToFront(e)
		return
	}
	if c.order.Len() >= c.size {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.items, old.Value.(*denial).id)
	}
	c.items[id] = c.order.PushFront(d)
}

// The replies cached are the single-limit layout { granted, allowed,
// remaining, retry µs, reset µs } and the policy layout { granted,
// allowed, then per limit: allowed, remaining, retry µs, reset µs }: both
// are two fields, then groups of (allowed, remaining, retry, reset) — the
// single layout is one group without its allowed, read here as allowed 0.

// groups calls f with the index of each limit's remaining in reply.
func groups(reply []int64, f func(rem int)) {
	if len(reply) == 5 {
		f(2)
		return
	}
	for j := 2; j+3 < len(reply); j += 4 {
		f(j + 1)
	}
}

// stableFor reports how long, in µs, every field of a rejection with need
// 1 stays what shifting its times gives: until the first limit that
// rejects may admit one. That holds for a limit with nothing left
// (remaining 0: its waits shrink with time, and it stays at 0 until its own
// retry) and for one untouched (reset 0: it stays full); a limit partly
// used can regain one at an instant the reply does not say, so a reply
// with one is not cached.
func stableFor(reply []int64) (int64, bool) {
	if len(reply) < 5 || reply[1] != 0 {
		return 0, false
	}
	life, ok := int64(-1), true
	groups(reply, func(rem int) {
		retry, reset := reply[rem+1], reply[rem+2]
		switch {
		case reply[rem] == 0 && retry > 0:
			if life < 0 || retry < life {
				life = retry
			}
		case reset == 0:
		default:
			ok = false
		}
	})
	return life, ok && life > 0
}

// shiftReply returns reply as the server would give it us µs later.
func shiftReply(reply []int64, us int64) []int64 {
	out := append([]int64(nil), reply...)
	groups(out, func(rem int) {
		out[rem+1] = max(out[rem+1]-us, 0)
		out[rem+2] = max(out[rem+2]-us, 0)
	})
	return out
}

// forget drops id's entry, if any.
func (c *denyCache) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[id]; ok {
		c.order.Remove(e)
		delete(c.items, id)
	}
}
