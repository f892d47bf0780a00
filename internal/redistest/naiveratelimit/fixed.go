package naiveratelimit

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// FixedWindow admits Limit requests per key in each wall-clock bucket of
// Window. BROKEN: see the package documentation.
type FixedWindow struct {
	Client redis.Cmdable
	Limit  int
	Window time.Duration
	// Now is the caller's clock; nil means time.Now. Tests pin it.
	Now func() time.Time
}

// Allow counts one request: INCR, then EXPIRE, as two round trips.
func (f *FixedWindow) Allow(ctx context.Context, key string) (bool, error) {
	bucket := f.bucketKey(key)
	n, err := f.Client.Incr(ctx, bucket).Result()
	if err != nil {
		return false, err
	}
	if err := f.Client.Expire(ctx, bucket, f.Window).Err(); err != nil {
		return false, err
	}
	return n <= int64(f.Limit), nil
}

// AllowCrashingAfterIncr is Allow for a process that dies between the two
// round trips: it sends INCR and never sends EXPIRE. The counter it leaves
// has no TTL and is never reset.
func (f *FixedWindow) AllowCrashingAfterIncr(ctx context.Context, key string) (bool, error) {
	n, err := f.Client.Incr(ctx, f.bucketKey(key)).Result()
	return n <= int64(f.Limit), err
}

// BucketKey returns the Redis key that counts key's current bucket.
func (f *FixedWindow) BucketKey(key string) string { return f.bucketKey(key) }

func (f *FixedWindow) bucketKey(key string) string {
	now := time.Now
	if f.Now != nil {
		now = f.Now
	}
	bucket := now().UnixMilli() / f.Window.Milliseconds()
	return key + ":" + strconv.FormatInt(bucket, 10)
}
