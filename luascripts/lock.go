package luascripts

// The scripts of package lock. The lock is a string "<id> <owner>" (with "*"
// in front once an AcquireWait caller waits for its release) and the
// fencing counter a plain integer; both keys share a hash tag.
var (
	// LockAcquire sets the lock and INCRs the counter if the lock is free;
	// if held it returns the holder's token, value and remaining PTTL.
	LockAcquire = load("lock_acquire.lua")
	// LockRelease deletes the lock only if it is still the caller's and,
	// when a waiter marked it, publishes a release notification.
	LockRelease = load("lock_release.lua")
	// LockExtend sets a new TTL only if the lock is still the caller's.
	LockExtend = load("lock_extend.lua")
	// LockHolder reads the holder's token, value and remaining PTTL.
	LockHolder = loadReadOnly("lock_holder.lua")
)
