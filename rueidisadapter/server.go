package rueidisadapter

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/rueidis"

	"github.com/redis-primitives/go/internal/luascripts"
)

// Info returns INFO section.
func (c *Client) Info(ctx context.Context, section string) (string, error) {
	cmd := []string{"INFO", section}
	if section == "" {
		cmd = cmd[:1]
	}
	m, err := c.read(ctx, c.rc.B().Arbitrary(cmd...).Build())
	if err != nil {
		return "", err
	}
	return text(&m)
}

// ConfigGet returns CONFIG GET name: a map on RESP3, an array of names and
// values on RESP2.
func (c *Client) ConfigGet(ctx context.Context, name string) (string, error) {
	m, err := c.read(ctx, c.rc.B().Arbitrary("CONFIG", "GET", name).Build())
	if err != nil {
		return "", err
	}
	if m.IsMap() {
		kv, err := m.AsStrMap()
		if v, ok := kv[name]; ok || err != nil {
			return v, err
		}
	} else {
		a, err := m.ToArray()
		if err != nil {
			return "", err
		}
		for i := 0; i+1 < len(a); i += 2 {
			if k, _ := a[i].ToString(); k == name {
				return a[i+1].ToString()
			}
		}
	}
	return "", fmt.Errorf("CONFIG GET %s: the server did not report it", name)
}

// Time returns the server's clock (TIME: seconds and microseconds).
func (c *Client) Time(ctx context.Context) (time.Time, error) {
	m, err := c.read(ctx, c.rc.B().Arbitrary("TIME").Build())
	if err != nil {
		return time.Time{}, err
	}
	a, err := m.ToArray()
	if err != nil || len(a) != 2 {
		return time.Time{}, fmt.Errorf("rueidisadapter: TIME replied %v: %v", &m, err)
	}
	var sec, usec int64
	for i, p := range []*int64{&sec, &usec} {
		s, err := a[i].ToString()
		if err == nil {
			*p, err = strconv.ParseInt(s, 10, 64)
		}
		if err != nil {
			return time.Time{}, fmt.Errorf("rueidisadapter: TIME replied %v: %w", &m, err)
		}
	}
	return time.Unix(sec, usec*1000), nil
}

// read sends cmd, a command that changes nothing, and returns its reply. It
// may be sent again, as the contract allows, but only within a deadline:
// rueidis sends a retryable command again until its context ends. It is
// not marked read-only, which a client with SendToReplicas would send to
// a replica, whose INFO and CONFIG are not the primary's.
func (c *Client) read(ctx context.Context, cmd rueidis.Completed) (rueidis.RedisMessage, error) {
	if _, bounded := ctx.Deadline(); bounded {
		cmd = cmd.ToRetryable().Pin()
	}
	r := c.do(ctx, cmd, true)
	if err := r.NonRedisError(); err != nil {
		return rueidis.RedisMessage{}, failure(ctx, false, err)
	}
	m, err := r.ToMessage()
	switch {
	case rueidis.IsRedisNil(err):
		return m, luascripts.ErrNil
	case err != nil:
		return m, replyError(&m, err)
	}
	return m, nil
}
