package luascripts

import (
	"hash/maphash"
	"strconv"
	"testing"
)

// Two lanes each keep one batch in flight, so a key's order holds only if
// every call on the key goes through one lane (the lane is chosen from the
// user key alone, whatever the limits); and the lanes only overlap if keys
// spread over both.
func TestBatchingSendsEveryCallOfAKeyThroughOneLaneAndSpreadsKeys(t *testing.T) {
	b := &Batcher{seed: maphash.MakeSeed()}
	used := [2]int{}
	for i := range 1000 {
		key := "user:" + strconv.Itoa(i)
		if i == 999 {
			key = "odd}{key%7D" // braces and escapes are just bytes of the key
		}
		lane := b.lane(key)
		for range 3 {
			if b.lane(key) != lane {
				t.Fatalf("key %q went to two lanes", key)
			}
		}
		if lane == &b.lanes[0] {
			used[0]++
		} else {
			used[1]++
		}
	}
	t.Logf("1000 keys over two lanes: %v", used)
	if used[0] < 400 || used[1] < 400 {
		t.Fatalf("1000 keys over two lanes: %v, want each above 400", used)
	}
}
