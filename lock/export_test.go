package lock

import "github.com/redis-primitives/go/internal/redistest"

// Every Locker of the tests is batched when REDISTEST_BATCH is set
// (scripts/test.sh's batched pass).
func init() { testBatch = redistest.BatchSize() }
