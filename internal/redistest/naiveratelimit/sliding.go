package naiveratelimit

import (
	"context"
	"crypto/rand"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// SlidingWindow admits Limit requests per key in any Window, using a sorted
// set of request times trimmed, counted and appended by three separate
// commands. BROKEN: see the package documentation.
type SlidingWindow struct {
	Client redis.Cmdable
	Limit  int
	Window time.Duration
	// Now is the caller's clock; nil means time.Now.
	Now func() time.Time
}

// Allow trims, counts, and records, each as its own round trip.
func (s *SlidingWindow) Allow(ctx context.Context, key string) (bool, error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	t := now().UnixMicro()
	floor := strconv.FormatInt(t-s.Window.Microseconds(), 10)
	if err := s.Client.ZRemRangeByScore(ctx, key, "-inf", floor).Err(); err != nil {
		return false, err
	}
	used, err := s.Client.ZCard(ctx, key).Result()
	if err != nil {
		return false, err
	}
	if used >= int64(s.Limit) {
		return false, nil
	}
	// Every caller that got here saw room; nothing stops them all adding.
	if err := s.Client.ZAdd(ctx, key, redis.Z{Score: float64(t), Member: rand.Text()}).Err(); err != nil {
		return false, err
	}
	return true, s.Client.PExpire(ctx, key, s.Window).Err()
}
