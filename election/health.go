package election

import (
	"fmt"
	"net/http"
	"time"
)

// Healthy reports, for a liveness probe, whether this node is stuck: it
// returns an error
//
//   - matching ErrPastDeadline when this node still holds a term whose local
//     deadline (IsLeader's) passed more than tolerance ago. Run clears the
//     term at that deadline when it runs, so such a node is wedged (a
//     Hook that blocks, a starved process) and restarting it is
//     the cure;
//   - matching ErrUnreachable (and the last attempt's error) when this
//     node contends and Redis has answered none of its attempts to take the
//     lease for longer than TTL + RetryInterval + tolerance: Redis is down
//     or unreachable from here, or refuses this node (a wrong password, an
//     ACL). A follower that reaches Redis gets an answer at least every
//     RetryInterval, and in one TTL a leader that cannot reach it is
//     replaced. An attempt still waiting for its reply counts as
//     unanswered. It stays unhealthy after Run returned such an error
//     (WRONGPASS, say), until Run is called again.
//
// A follower that gets answers, a leader within its deadline, a node
// between terms and an Elector that never ran are healthy. An Elector not
// made by New is not: Healthy returns ErrNilClient. Healthy makes no round
// trip.
//
// tolerance is how much longer to allow before reporting, to ride out a
// scheduling hiccup; client-go's leader-election health adaptor calls it
// maxTolerableExpiredLease. A negative tolerance is an error matching
// ErrInvalidConfig.
func (e *Elector) Healthy(tolerance time.Duration) error {
	if tolerance < 0 {
		return invalid("health tolerance %v is negative", tolerance)
	}
	if err := e.ready(); err != nil {
		return err
	}
	e.mu.Lock()
	term, k := e.term, e.keeper
	e.mu.Unlock()
	if k != nil {
		if late := time.Since(k.Deadline()); late > tolerance {
			return fmt.Errorf("%w: %q epoch %d: %v past the deadline (tolerance %v)",
				ErrPastDeadline, e.cfg.Name, term.Epoch, late.Round(time.Millisecond), tolerance)
		}
	}
	since, err := e.unanswered()
	d := time.Since(since)
	if since.IsZero() || d <= e.cfg.TTL+e.cfg.RetryInterval+tolerance {
		return nil
	}
	msg := fmt.Sprintf("%q: no attempt answered for %v (TTL %v + RetryInterval %v, tolerance %v)",
		e.cfg.Name, d.Round(time.Millisecond), e.cfg.TTL, e.cfg.RetryInterval, tolerance)
	if err == nil {
		return fmt.Errorf("%w: %s; the attempt has not returned", ErrUnreachable, msg)
	}
	return fmt.Errorf("%w: %s; the last: %w", ErrUnreachable, msg, err)
}

// HealthHandler returns an http.Handler for a liveness probe: it answers
// 200 "ok" while Healthy(tolerance) returns nil, and 503 with the error
// otherwise. Mount it where the probe looks, for example /healthz.
func (e *Elector) HealthHandler(tolerance time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := e.Healthy(tolerance); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, err)
			return
		}
		fmt.Fprintln(w, "ok")
	})
}
