package redistest

import (
	"os"
	"strconv"
)

// BatchSize is the batch size the primitives' test helpers add to every
// primitive they make (lock.WithBatching, fence.WithBatching), from
// REDISTEST_BATCH, or 0 for none: scripts/test.sh runs the lock and fence
// suites once more with it set, so that each of their guarantees is also
// tested batched. A value that is not a positive integer is 0.
func BatchSize() int {
	n, err := strconv.Atoi(os.Getenv("REDISTEST_BATCH"))
	if err != nil || n < 1 {
		return 0
	}
	return n
}
