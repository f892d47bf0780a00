package bench

import (
	"testing"
	"time"
)

// A bucket's bounds must contain every value mapped to it, or percentiles
// would be reported from the wrong bucket.
func TestHistogramBucketsContainTheirValues(t *testing.T) {
	for _, v := range []uint64{0, 1, 31, 32, 33, 63, 64, 65, 1000, 123456, 1 << 40, 1<<63 + 12345} {
		i := bucketOf(v)
		if lo, hi := lowOf(i), lowOf(i+1); v < lo || (hi > lo && v >= hi) {
			t.Errorf("value %d in bucket %d = [%d, %d)", v, i, lo, hi)
		}
	}
}

func TestHistogramQuantilesWithinResolution(t *testing.T) {
	var h histogram
	for i := 1; i <= 1000; i++ {
		h.record(time.Duration(i) * time.Microsecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Microsecond}, {0.99, 990 * time.Microsecond}} {
		got := h.quantile(c.q)
		if diff := float64(got-c.want) / float64(c.want); diff < -0.04 || diff > 0.04 {
			t.Errorf("q%v = %v, want %v ± 4%%", c.q, got, c.want)
		}
	}
}
