package luascripts

// The scripts of package lock. Every one takes the lock hash (and for
// LockAcquire the fencing counter) in KEYS; the two keys share a hash tag.
var (
	// LockAcquire refuses if the lock is held (returning the holder's token,
	// owner and remaining PTTL), else INCRs the counter and sets the lock.
	LockAcquire = load("lock_acquire.lua")
	// LockRelease deletes the lock only if it is still the caller's and
	// publishes a release notification.
	LockRelease = load("lock_release.lua")
	// LockExtend sets a new TTL only if the lock is still the caller's.
	LockExtend = load("lock_extend.lua")
	// LockHolder reads the holder's token, owner and remaining PTTL.
	LockHolder = loadReadOnly("lock_holder.lua")
)
