package ratelimit

import (
	"container/list"
	"strings"
	"sync"
	"time"
)

// A denyCache remembers rejections until their RetryAfter, so that further
// calls on the same key and rule are answered without a round trip (see
// WithDenyCache). It caches only a rejection in which every limit has
// nothing left: no request of any rule can change such a limit (each
// would be rejected by it and consume nothing), so until the first of
// them may admit again every field of the answer changes only with time.
// Bounded: at most size entries, the least recently used evicted first;
// memory grows with the entries, not with size. No goroutine: expired
// entries are dropped when met.
type denyCache struct {
	mu   sync.Mutex
	size int
	keys map[string]map[string]*list.Element // user key → rule name → entry
	lru  list.List                           // *denial, most recently used first
}

// A denial is a rejection as the server replied it, with the time its
// reply arrived: an answer at a later time is the reply with every wait
// shorter by the time since. The server decided before the reply arrived,
// so the waits so measured are never shorter than the server's; longer by
// at most the reply's time in flight.
type denial struct {
	key, rule string
	ids       []string  // the rule's limits' ids
	at        time.Time // when the reply arrived (or the pinned time)
	until     time.Time // at + the earliest wait: then one limit may admit
	reply     reply
}

func newDenyCache(size int) *denyCache {
	return &denyCache{size: size, keys: map[string]map[string]*list.Element{}}
}

// ruleName names r in the cache: a Limit and a Policy of that one limit
// reply differently and never share an entry, and ids never hold a comma.
func ruleName(r Rule) string {
	if lim, ok := r.(Limit); ok {
		return "L" + lim.id
	}
	var b strings.Builder
	b.WriteByte('P')
	for i, lim := range r.(Policy) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(lim.id)
	}
	return b.String()
}

// get returns the reply the server would give at now to a call of one
// request on key under the rule named rule, or false.
func (c *denyCache) get(key, rule string, now time.Time) (reply, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.keys[key][rule]
	if !ok {
		return reply{}, false
	}
	d := e.Value.(*denial)
	if !now.Before(d.until) {
		c.remove(e)
		return reply{}, false
	}
	c.lru.MoveToFront(e)
	return d.reply.after(now.Sub(d.at).Microseconds()), true
}

// put remembers rejection r of key under rule (of limits lims), whose
// reply arrived at at, if it is one the cache can answer for.
func (c *denyCache) put(key, rule string, lims []Limit, at time.Time, r reply) {
	wait := int64(-1)
	for _, l := range r.limits {
		if l.remaining != 0 || l.retry <= 0 {
			return // a limit with room, or no wait: not predictable
		}
		if wait < 0 || l.retry < wait {
			wait = l.retry
		}
	}
	if wait <= 0 {
		return
	}
	d := &denial{key: key, rule: rule, at: at, until: at.Add(time.Duration(wait) * time.Microsecond), reply: r}
	d.ids = make([]string, len(lims))
	for i, l := range lims {
		d.ids[i] = l.id
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.keys[key][rule]; ok {
		e.Value = d
		c.lru.MoveToFront(e)
		return
	}
	if c.lru.Len() >= c.size {
		c.remove(c.lru.Back())
	}
	rules := c.keys[key]
	if rules == nil {
		rules = map[string]*list.Element{}
		c.keys[key] = rules
	}
	rules[rule] = c.lru.PushFront(d)
}

// forgetKey drops every entry of key, under any rule (this Limiter's Reset).
func (c *denyCache) forgetKey(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.keys[key] {
		c.remove(e)
	}
}

// forgetLimits drops the entries of key under a rule that holds one of
// lims: a call that just consumed from them proved those entries stale.
func (c *denyCache) forgetLimits(key string, lims []Limit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.keys[key] {
		for _, id := range e.Value.(*denial).ids {
			if hasID(lims, id) {
				c.remove(e)
				break
			}
		}
	}
}

func hasID(lims []Limit, id string) bool {
	for _, l := range lims {
		if l.id == id {
			return true
		}
	}
	return false
}

// remove drops entry e. The caller holds c.mu.
func (c *denyCache) remove(e *list.Element) {
	d := c.lru.Remove(e).(*denial)
	rules := c.keys[d.key]
	delete(rules, d.rule)
	if len(rules) == 0 {
		delete(c.keys, d.key)
	}
}

// after returns r as the server would give it us µs later, while no
// limit of it may admit: every wait shorter by us, nothing else changed.
func (r reply) after(us int64) reply {
	out := r
	out.limits = make([]limitReply, len(r.limits))
	for i, l := range r.limits {
		l.retry, l.reset = max(l.retry-us, 0), max(l.reset-us, 0)
		out.limits[i] = l
	}
	return out
}
