package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// MemoryRow is what one limiter keeps in Redis for a number of keys, each
// sent memoryExtra more requests than its limit per minute admits.
type MemoryRow struct {
	Name string `json:"name"`
	Note string `json:"note"`
	// Keys is how many keys were filled; RedisKeys how many Redis keys
	// that made.
	Keys      int `json:"keys"`
	RedisKeys int `json:"redis_keys"`
	// Sent and Admitted are requests per key.
	Sent     int     `json:"sent_per_key"`
	Admitted float64 `json:"admitted_per_key"`
	// UsagePerKey is the sum of MEMORY USAGE (SAMPLES 0, exact) over the
	// Redis keys, divided by Keys.
	UsagePerKey float64 `json:"memory_usage_bytes_per_key"`
	// UsedMemoryPerKey is the growth of INFO used_memory during the fill,
	// divided by Keys: it includes the keyspace's own overhead (dict
	// entries, expiry entries) that MEMORY USAGE leaves out, and noise
	// (see usedMemory).
	UsedMemoryPerKey float64 `json:"used_memory_bytes_per_key"`
	// PerAdmitted is UsagePerKey divided by the admitted requests per key:
	// the cost of one admitted request, for the sliding log.
	PerAdmitted float64 `json:"bytes_per_admitted_request,omitempty"`
	// MaxMembers is the largest sliding-log sorted set found (ZCARD): it
	// must not exceed the limit.
	MaxMembers int64 `json:"max_log_members,omitempty"`
	// Limit is the limit per minute the keys were filled to.
	Limit int `json:"limit"`
	// Parts splits UsagePerKey by the kind of Redis key, for ours: the
	// algorithm of each limit's state ("log", "counter", "gcra").
	Parts map[string]float64 `json:"parts_bytes_per_key,omitempty"`
}

// memoryExtra requests beyond the limit are sent to each key, so the
// figures show what a key holds once its limit is reached and exceeded.
const memoryExtra = 10

func (r *runner) memory(ctx context.Context) ([]MemoryRow, error) {
	c := r.client()
	var rows []MemoryRow
	impls := limiterImpls()
	for i, im := range impls {
		row, err := r.memoryOf(ctx, c, i, im, memoryQuota, r.cfg.MemoryKeys)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	// The reference for the log's memory: a plain sorted-set log that
	// stores each admitted request's time as both score and member.
	plain := limiterImpl{name: NamePlainLog, note: "ZREMRANGEBYSCORE, ZCARD, ZADD t t, PEXPIRE in one script",
		keyPattern: func(prefix string) string { return prefix + "*" }, make: plainLog}
	row, err := r.memoryOf(ctx, c, len(impls)+1, plain, memoryQuota, r.cfg.MemoryKeys)
	if err != nil {
		return nil, err
	}
	rows = append(rows, row)
	// Above zset-max-listpack-entries (128 by default) a sorted set turns
	// into a skiplist and each member costs more: the log once more with a
	// limit of 1,000, on a twentieth of the keys.
	row, err = r.memoryOf(ctx, c, len(impls), impls[0], quota{n: 1000, window: time.Minute}, max(r.cfg.MemoryKeys/20, 1))
	if err != nil {
		return nil, err
	}
	return append(rows, row), nil
}

// memoryOf fills n keys of limiter im (the i-th) to q and measures them.
func (r *runner) memoryOf(ctx context.Context, c *redis.Client, i int, im limiterImpl, q quota, n int) (MemoryRow, error) {
	// Key names count in MEMORY USAGE: every limiter gets the same
	// short prefix ("m0:" …) and the same short keys ("k0" …) on top of
	// the names its library adds.
	prefix := r.cfg.Prefix + "m" + strconv.Itoa(i) + ":"
	allow, err := im.make(c, prefix, q)
	if err != nil {
		return MemoryRow{}, fmt.Errorf("bench: memory %s: %w", im.name, err)
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
	}
	before, err := usedMemory(ctx, c)
	if err != nil {
		return MemoryRow{}, err
	}
	sent := q.n + memoryExtra
	admitted, err := r.fill(ctx, allow, keys, sent)
	if err != nil {
		return MemoryRow{}, fmt.Errorf("bench: memory %s: %w", im.name, err)
	}
	after, err := usedMemory(ctx, c)
	if err != nil {
		return MemoryRow{}, err
	}
	row := MemoryRow{Name: im.name, Note: im.note, Keys: len(keys), Sent: sent, Limit: q.n,
		Admitted:         float64(admitted) / float64(len(keys)),
		UsedMemoryPerKey: float64(after-before) / float64(len(keys))}
	found, err := scanKeys(ctx, c, im.keyPattern(prefix))
	if err != nil {
		return MemoryRow{}, err
	}
	row.RedisKeys = len(found)
	var total int64
	pipe := c.Pipeline()
	usage := make([]*redis.IntCmd, len(found))
	for i, k := range found {
		usage[i] = pipe.MemoryUsage(ctx, k, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return MemoryRow{}, fmt.Errorf("bench: MEMORY USAGE: %w", err)
	}
	for i, u := range usage {
		total += u.Val()
		// Ours: "prefix{key}:l100:1m", "prefix{key}:g100:1m:100" (the
		// algorithm's letter first).
		if _, id, ok := strings.Cut(found[i], "}:"); ok && id != "" {
			part := map[byte]string{'l': "log", 'c': "counter", 'g': "gcra"}[id[0]]
			if row.Parts == nil {
				row.Parts = map[string]float64{}
			}
			row.Parts[part] += float64(u.Val()) / float64(len(keys))
		}
	}
	row.UsagePerKey = float64(total) / float64(len(keys))
	if im.name == NameOursLog {
		row.PerAdmitted = row.UsagePerKey / row.Admitted
		for _, k := range found {
			if !strings.Contains(k, "}:l") {
				continue
			}
			n, err := c.ZCard(ctx, k).Result()
			if err != nil {
				return MemoryRow{}, err
			}
			row.MaxMembers = max(row.MaxMembers, n)
		}
	}
	r.cfg.logf("  memory %-30s limit %4d: %6.0f B/key (MEMORY USAGE), %6.0f B/key (used_memory)", im.name, q.n, row.UsagePerKey, row.UsedMemoryPerKey)
	return row, nil
}

// fill sends n requests to every key and counts the admitted ones.
func (r *runner) fill(ctx context.Context, allow allower, keys []string, n int) (int64, error) {
	workers := min(r.cfg.Goroutines, len(keys))
	var (
		wg       sync.WaitGroup
		admitted atomic.Int64
		errMu    sync.Mutex
		firstErr error
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := w; k < len(keys); k += workers {
				for range n {
					ok, err := allow(ctx, keys[k])
					if err != nil {
						errMu.Lock()
						firstErr = err
						errMu.Unlock()
						return
					}
					if ok {
						admitted.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	return admitted.Load(), firstErr
}

// usedMemory returns INFO's used_memory. It moves with more than keys
// (client buffers, the Lua VM's garbage), so the growth it shows over a
// fill is a rough second opinion beside MEMORY USAGE.
func usedMemory(ctx context.Context, c *redis.Client) (int64, error) {
	info, err := c.Info(ctx, "memory").Result()
	if err != nil {
		return 0, fmt.Errorf("bench: INFO memory: %w", err)
	}
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("bench: INFO memory has no used_memory")
}

func scanKeys(ctx context.Context, c *redis.Client, pattern string) ([]string, error) {
	var keys []string
	iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return nil, fmt.Errorf("bench: SCAN %s: %w", pattern, err)
	}
	return keys, nil
}

// deleteKeys deletes every key matching the patterns with DEL, which frees
// them before it returns (UNLINK would free them in the background).
func deleteKeys(ctx context.Context, c *redis.Client, patterns ...string) error {
	for _, p := range patterns {
		keys, err := scanKeys(ctx, c, p)
		if err != nil {
			return err
		}
		for len(keys) > 0 {
			n := min(len(keys), 1000)
			if err := c.Del(ctx, keys[:n]...).Err(); err != nil {
				return fmt.Errorf("bench: DEL: %w", err)
			}
			keys = keys[n:]
		}
	}
	return nil
}

// waitClients waits, for up to five seconds, until the server has at most
// n connected clients: it frees a closed connection's buffers when it
// notices the close.
func waitClients(ctx context.Context, c *redis.Client, n int) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		info, err := c.Info(ctx, "clients").Result()
		if err != nil {
			return fmt.Errorf("bench: INFO clients: %w", err)
		}
		for line := range strings.SplitSeq(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "connected_clients:"); ok {
				if got, _ := strconv.Atoi(v); got <= n || time.Now().After(deadline) {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// plainLogScript is the least a sorted-set log can store: the time in µs
// as score and member (requests in the same µs collapse into one).
var plainLogScript = redis.NewScript(plainLogSource)

const plainLogSource = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('ZADD', KEYS[1], now, now)
redis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2]) / 1000))
return 1`

func plainLog(c *redis.Client, prefix string, q quota) (allower, error) {
	return func(ctx context.Context, key string) (bool, error) {
		n, err := plainLogScript.Run(ctx, c, []string{prefix + key}, q.n, q.window.Microseconds()).Int()
		return n == 1, err
	}, nil
}
