package election

// Reason says why a node stopped leading.
type Reason int

const (
	// ReasonLeaseLost: a renewal found the lease gone or someone else's.
	// It expired before the renewal arrived, or it was deleted.
	ReasonLeaseLost Reason = iota + 1
	// ReasonUnreachable: Redis did not confirm a renewal before the local
	// deadline. The renewals failed or went unanswered (a server that is
	// down, frozen, partitioned or too slow), and the process was running
	// and trying the whole time.
	ReasonUnreachable
	// ReasonDeadlinePassed: the local deadline passed while this process
	// was not running: it woke up (after a GC pause, SIGSTOP, a suspended
	// VM) more than one renew interval past the deadline, too late to have
	// renewed. Another node may have led, and written, in the meantime.
	ReasonDeadlinePassed
	// ReasonStopped: Run's context ended. The lease was released.
	ReasonStopped
	// ReasonResigned: fn returned while the term was still valid. The lease
	// was released.
	ReasonResigned
	// ReasonFencedOut: a write through the term's Fencer was refused as
	// stale (fence.ErrStale): a newer term has written, so this one could
	// no longer write anything. The lease was released.
	ReasonFencedOut
)

// String returns the reason in words.
func (r Reason) String() string {
	switch r {
	case ReasonLeaseLost:
		return "lease lost"
	case ReasonUnreachable:
		return "redis unreachable"
	case ReasonDeadlinePassed:
		return "deadline passed"
	case ReasonStopped:
		return "stopped"
	case ReasonResigned:
		return "resigned"
	case ReasonFencedOut:
		return "fenced out"
	}
	return "unknown reason"
}
