package ratelimit

import (
	"strconv"
	"testing"
	"time"
)

// Two lanes each keep one batch in flight, so a key's order holds only if
// every call on the key, alone or in a Policy, whatever its limits, goes
// through one lane; and the lanes only overlap if keys spread over both.
func TestBatchingSendsEveryCallOfAKeyThroughOneLaneAndSpreadsKeys(t *testing.T) {
	limits := []Limit{
		GCRA(100, time.Minute, 10), SlidingCounter(5, time.Hour), SlidingLog(1000, time.Second),
	}
	used := [2]int{}
	for i := range 1000 {
		key := "user:" + strconv.Itoa(i)
		if i == 999 {
			key = "odd}{key%7D" // escaped into the tag: still one tag per key
		}
		want := -1
		for _, lim := range limits {
			id := lim.fix().id
			if id == "" {
				t.Fatalf("%v: no id", lim)
			}
			lane := laneOf(base("rl:", key)+id, 2)
			if want >= 0 && lane != want {
				t.Fatalf("key %q: limit %s in lane %d, another in %d", key, id, lane, want)
			}
			want = lane
		}
		used[want]++
	}
	t.Logf("1000 keys over two lanes: %v", used)
	if used[0] < 400 || used[1] < 400 {
		t.Fatalf("1000 keys over two lanes: %v, want each above 400", used)
	}
}
