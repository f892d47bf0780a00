package election

import (
	"errors"
	"fmt"
)

// Errors returned by this package. Match them with errors.Is: the errors
// returned wrap them with details. When Run's context ends, Run's error also
// matches context.Canceled or context.DeadlineExceeded.
var (
	// ErrNilClient is returned by New for a nil client, and by the calls
	// of an Elector not made by New (its zero value).
	ErrNilClient = errors.New("election: nil client")
	// ErrInvalidConfig is returned by New for a Config it cannot use: an
	// empty Name, a negative duration, a prefix with braces, a safety margin
	// that leaves no time to renew. The error says which field.
	ErrInvalidConfig = errors.New("election: invalid config")
	// ErrRenewInterval is returned by New, together with ErrInvalidConfig,
	// when RenewInterval is not well below TTL: more than TTL/2. A leader
	// must get at least two chances to renew before its lease ends.
	ErrRenewInterval = errors.New("election: renew interval not well below the ttl")
	// ErrRunning is returned by Run when another Run of the same Elector
	// has not returned yet: one Elector is one node.
	ErrRunning = errors.New("election: already running")
	// ErrPastDeadline is returned by Healthy (and reported by
	// HealthHandler) when this node still holds a term past its local
	// deadline: it is wedged.
	ErrPastDeadline = errors.New("election: leading past the lease's deadline")
	// ErrUnreachable is returned by Healthy (and reported by
	// HealthHandler) when Redis has answered none of this node's attempts
	// to take the lease for longer than TTL + RetryInterval: it cannot
	// reach Redis, or Redis refuses it (a wrong password, an ACL). The
	// error also wraps the last attempt's error.
	ErrUnreachable = errors.New("election: cannot reach redis, or refused by it")
	// ErrNotLeading is returned by Resign when this node holds no term.
	ErrNotLeading = errors.New("election: not leading")
	// ErrNoLeader is returned by Leader when nobody holds the leadership.
	ErrNoLeader = errors.New("election: no leader")
	// ErrDemoted is matched by the *DemotedError that is the cause
	// (context.Cause) of the context handed to a leader's fn once this
	// node stops leading.
	ErrDemoted = errors.New("election: demoted")
)

// DemotedError tells why a term ended. It is the cause of the context given
// to fn, so fn can tell a lost lease from a shutdown:
//
//	var d *election.DemotedError
//	if errors.As(context.Cause(ctx), &d) && d.Reason == election.ReasonLeaseLost { … }
//
// When Run's own context ends, fn's context carries that context's cause
// instead, and the Hook is told ReasonStopped.
type DemotedError struct {
	Epoch  int64
	Reason Reason
}

func (e *DemotedError) Error() string {
	return fmt.Sprintf("%s: epoch %d: %s", ErrDemoted, e.Epoch, e.Reason)
}

// Is makes errors.Is(err, ErrDemoted) true.
func (e *DemotedError) Is(target error) bool { return target == ErrDemoted }

// configError is a bad Config. Its message names ErrInvalidConfig once and
// then the detail, also when it matches a second sentinel too, so that no
// message reads "election: invalid config: election: …".
type configError struct {
	also   error // a second sentinel it matches, or nil
	detail string
	cause  error // an error from package lock or fence, or nil
}

func (e *configError) Error() string {
	msg := ErrInvalidConfig.Error() + ": " + e.detail
	if e.cause != nil {
		msg += ": " + e.cause.Error()
	}
	return msg
}

func (e *configError) Unwrap() []error {
	errs := []error{ErrInvalidConfig}
	if e.also != nil {
		errs = append(errs, e.also)
	}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	return errs
}

func invalid(format string, args ...any) error {
	return &configError{detail: fmt.Sprintf(format, args...)}
}
