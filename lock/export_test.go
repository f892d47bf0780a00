package lock

import "time"

// RecheckPolicyEvery sets how long l trusts the maxmemory-policy it read.
func RecheckPolicyEvery(l *Locker, d time.Duration) { l.policy.Recheck = d }
