package bench

import (
	"math/bits"
	"time"
)

// subBits sets the histogram's resolution: 2^subBits buckets per power of
// two, so a recorded value is off by at most 1/32 (about 3%).
const subBits = 5

const histBuckets = (64 - subBits + 1) << subBits

// histogram counts durations in log-linear buckets. Recording allocates
// nothing, so it does not disturb the allocation counts it runs beside. A
// histogram belongs to one goroutine; merge them afterwards.
type histogram struct {
	counts [histBuckets]uint64
	n      uint64
}

func bucketOf(v uint64) int {
	if v < 1<<subBits {
		return int(v)
	}
	shift := bits.Len64(v) - subBits - 1
	return (shift+1)<<subBits + int(v>>shift) - 1<<subBits
}

// lowOf is the smallest value that falls in bucket i.
func lowOf(i int) uint64 {
	if i < 1<<subBits {
		return uint64(i)
	}
	shift := i>>subBits - 1
	return uint64(i&(1<<subBits-1)+1<<subBits) << shift
}

func (h *histogram) record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[bucketOf(uint64(d))]++
	h.n++
}

func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
}

// quantile returns the q-th quantile (0 < q ≤ 1): the middle of the bucket
// that holds it.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.5)
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo := lowOf(i)
			hi := lowOf(i + 1)
			return time.Duration(lo + (hi-lo)/2)
		}
	}
	return 0
}
