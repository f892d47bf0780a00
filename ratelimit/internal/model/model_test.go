package model_test

import (
	"math"
	"testing"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit/internal/model"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

// The model is checked against the scripts by ratelimittest's agreement
// test; this one covers what a trace does not reach: a backlog whose drain
// since its last write overflows int64 when multiplied out.
func TestGCRABacklogDrainsWithoutOverflowAfterALongIdle(t *testing.T) {
	s := model.NewStore()
	lim := model.Limit{Alg: 'g', Cap: 3, A: 1, B: math.MaxInt32} // drains 2^31-1 per µs
	keys := []string{"k"}
	if r := s.Decide(0, keys, []model.Limit{lim}, 3, model.Allow); r.Granted != 3 {
		t.Fatalf("first call granted %d of 3", r.Granted)
	}
	// 2^40 µs later the drain, multiplied out, is past 2^63.
	r := s.Decide(1<<40, keys, []model.Limit{lim}, 3, model.Allow)
	if r.Granted != 3 || r.Limits[0].Remaining != 0 {
		t.Fatalf("after a long idle: %+v, want all 3 granted", r)
	}
}
