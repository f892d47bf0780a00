package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/lock"
)

// lockTTL is long enough that no lease expires during an operation: every
// acquisition is released by the same operation.
const lockTTL = 10 * time.Second

// A locker makes one attempt to take a lock and, if it got it, releases
// it at once. It reports whether it got it.
type locker func(ctx context.Context, key string) (bool, error)

// oursLocker is ours on the go-redis client c, through goredisadapter.
func oursLocker(c *redis.Client, prefix string) (locker, error) {
	return oursLockerWith(goredisadapter.New(c), lock.WithPrefix(prefix))
}

// oursLockerWith is ours on client, a client through its adapter.
func oursLockerWith(client lock.Client, opts ...lock.Option) (locker, error) {
	l, err := lock.New(client, opts...)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, key string) (bool, error) {
		lease, err := l.Acquire(ctx, key, lockTTL)
		if errors.Is(err, lock.ErrHeld) {
			return false, nil
		} else if err != nil {
			return false, err
		}
		ok, err := l.Release(ctx, lease)
		if err != nil {
			return false, err
		}
		if !ok {
			return false, fmt.Errorf("bench: lock %q: release of a live lease reported it lost", key)
		}
		return true, nil
	}, nil
}

// rueidislockLocker is rueidislock with its defaults (KeyMajority 2: two
// of three keys, auto-pipelining, client-side caching), on a rueidis
// client of its own. A release is the cancel of the lock's context, which
// rueidislock carries out before it returns.
func (r *runner) rueidislockLocker(prefix string) (locker, error) {
	l, err := rueidislock.NewLocker(rueidislock.LockerOption{
		KeyPrefix:    strings.TrimSuffix(prefix, ":"),
		KeyValidity:  lockTTL,
		ClientOption: rueidis.ClientOption{InitAddress: []string{r.addr}, DisableCache: false},
	})
	if err != nil {
		return nil, err
	}
	r.closers = append(r.closers, l.Close)
	return func(ctx context.Context, key string) (bool, error) {
		_, cancel, err := l.TryWithContext(ctx, key)
		if errors.Is(err, rueidislock.ErrNotLocked) {
			return false, nil
		} else if err != nil {
			return false, err
		}
		cancel()
		return true, nil
	}, nil
}

func redislockLocker(c *redis.Client) locker {
	l := redislock.New(c)
	return func(ctx context.Context, key string) (bool, error) {
		// nil options: the default retry strategy, which is not to retry.
		lk, err := l.Obtain(ctx, key, lockTTL, nil)
		if errors.Is(err, redislock.ErrNotObtained) {
			return false, nil
		} else if err != nil {
			return false, err
		}
		if err := lk.Release(ctx); err != nil {
			return false, err
		}
		return true, nil
	}
}

func redsyncLocker(c *redis.Client) locker {
	rs := redsync.New(goredis.NewPool(c))
	return func(ctx context.Context, key string) (bool, error) {
		m := rs.NewMutex(key, redsync.WithTries(1), redsync.WithExpiry(lockTTL))
		err := m.LockContext(ctx)
		var taken *redsync.ErrTaken
		if errors.Is(err, redsync.ErrFailed) || errors.As(err, &taken) {
			return false, nil
		} else if err != nil {
			return false, err
		}
		ok, err := m.UnlockContext(ctx)
		if err != nil {
			return false, err
		}
		if !ok {
			return false, fmt.Errorf("bench: redsync %q: unlock of a live lock reported false", key)
		}
		return true, nil
	}
}

// lockKeyBase is what goes in front of a lock's name for library lib
// whose keys live under prefix: nothing for ours, which puts the prefix in
// front itself (WithPrefix), the prefix for the peers.
func lockKeyBase(lib, prefix string) string {
	if strings.HasPrefix(lib, NameOursLock) || lib == NameRueidislock { // both prefix the names themselves
		return ""
	}
	return prefix
}

// lockCases builds the two lock tables: acquire+release on cfg.Keys keys
// (one block of keys per goroutine, so uncontended) and on one key that
// every goroutine wants.
func (r *runner) lockCases(ctx context.Context) ([]*benchCase, error) {
	type impl struct {
		name, note string
		ref        bool
		prefix     string
		make       func(c *redis.Client, prefix string) (locker, error)
	}
	impls := []impl{
		{name: NameOursLock, ref: true, prefix: "ours:", note: "Acquire (fencing token) + Release",
			make: oursLocker},
		{name: NameOursLockBatch, prefix: "oursbatch:", note: "the same, WithBatching(64)",
			make: func(c *redis.Client, prefix string) (locker, error) {
				return oursLockerWith(goredisadapter.New(c), lock.WithPrefix(prefix), lock.WithBatching(64))
			}},
		{name: NameOursLockRueidis, prefix: "oursrueidis:", note: "the same, through rueidisadapter (rueidis defaults)",
			make: func(_ *redis.Client, prefix string) (locker, error) {
				c, err := r.rueidisClient()
				if err != nil {
					return nil, err
				}
				return oursLockerWith(c, lock.WithPrefix(prefix))
			}},
		{name: NameOursLockRueidisBatch, prefix: "oursrueidisbatch:", note: "through rueidisadapter, WithBatching(64)",
			make: func(_ *redis.Client, prefix string) (locker, error) {
				c, err := r.rueidisClient()
				if err != nil {
					return nil, err
				}
				return oursLockerWith(c, lock.WithPrefix(prefix), lock.WithBatching(64))
			}},
		{name: NameOursLockValkey, prefix: "oursvalkey:", note: "Acquire + Release through valkeyadapter (valkey-go defaults)",
			make: func(_ *redis.Client, prefix string) (locker, error) {
				c, err := r.valkeyClient()
				if err != nil {
					return nil, err
				}
				return oursLockerWith(c, lock.WithPrefix(prefix))
			}},
		{name: NameRueidislock, prefix: "rueidislock:", note: "TryWithContext + cancel (defaults: 2 of 3 keys, auto-pipelining)",
			make: func(_ *redis.Client, prefix string) (locker, error) { return r.rueidislockLocker(prefix) }},
		{name: NameRedislock, prefix: "redislock:", note: "Obtain (no retry) + Release",
			make: func(c *redis.Client, _ string) (locker, error) { return redislockLocker(c), nil }},
		{name: NameRedsync, prefix: "redsync:", note: "one pool, WithTries(1): LockContext + UnlockContext",
			make: func(c *redis.Client, _ string) (locker, error) { return redsyncLocker(c), nil }},
	}

	many := &benchCase{id: TableLockMany,
		title: fmt.Sprintf("Locks, %d keys (uncontended): acquire+release pairs", r.cfg.Keys),
		unit:  "pairs/s", okUnit: "acquired/s", ref: NameOursLock}
	hot := &benchCase{id: TableLockHot,
		title: "Locks, 1 key (contended): attempts, and the acquisitions among them",
		unit:  "attempts/s", okUnit: "acquired/s", ref: NameOursLock}

	for _, im := range impls {
		base := r.cfg.Prefix + "lock:" + im.prefix
		c := r.client()
		lk, err := im.make(c, base)
		if err != nil {
			return nil, err
		}
		keyBase := lockKeyBase(im.name, base)
		keys := make([]string, r.cfg.Keys)
		for i := range keys {
			keys[i] = keyBase + "k" + strconv.Itoa(i)
		}
		hotKey := keyBase + "hot"
		g := r.cfg.Goroutines
		many.contenders = append(many.contenders, contender{name: im.name, note: im.note, ref: im.ref,
			run: func(ctx context.Context, d time.Duration) (sample, error) {
				return measure(ctx, g, d, func(ctx context.Context, g, i int) (bool, error) {
					ok, err := lk(ctx, keys[keyOf(g, i, r.cfg.Goroutines, len(keys))])
					if err == nil && !ok {
						err = fmt.Errorf("bench: %s refused a lock no one else uses", im.name)
					}
					return ok, err
				})
			}})
		hot.contenders = append(hot.contenders, contender{name: im.name, note: im.note, ref: im.ref,
			run: func(ctx context.Context, d time.Duration) (sample, error) {
				return measure(ctx, g, d, func(ctx context.Context, _, _ int) (bool, error) {
					return lk(ctx, hotKey)
				})
			}})
	}
	return []*benchCase{many, hot}, nil
}
