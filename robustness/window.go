package robustness

import (
	"fmt"
	"slices"
	"time"
)

// The window bound: a sliding log of n per window admits at most n in any
// window of the server's clock. A decision's reply does not carry that
// clock, so there is no sequential spec to replay; instead, since the
// server on this host decided within [Call, Return] of each call, the check
// takes every window that begins at an admitted call and counts the admitted
// calls certainly inside it (called at or after its start, returned before
// its end). More than n is illegal. A call of unknown outcome is counted as
// not admitted, the reading most favourable to the limiter. A window that
// overlaps a loss (a restart without persistence, a failover) may see the
// quota start afresh, as documented: it is classified, not judged.

// Decision is one recorded limiter call.
type Decision struct {
	Call, Return int64
	Outcome      Outcome // Accepted: admitted; Refused: denied
}

// WindowResult is what the bound found in one history.
type WindowResult struct {
	Windows  int // windows judged
	Over     int // windows over the limit, none overlapping a loss: illegal
	OverLoss int // windows over the limit that overlap a loss: documented
	Worst    int // the most admitted calls certainly in one window
	Example  string
}

// CheckWindow checks decisions against a limit of n per window.
func CheckWindow(ds []Decision, n int, window time.Duration, losses []Loss) WindowResult {
	w := window.Microseconds() - slack.Microseconds()
	var admitted []Decision
	for _, d := range ds {
		if d.Outcome == Accepted {
			admitted = append(admitted, d)
		}
	}
	slices.SortFunc(admitted, func(a, b Decision) int { return int(a.Call - b.Call) })
	var res WindowResult
	for j, start := range admitted {
		end := start.Call + w
		in := 0
		for _, d := range admitted[j:] {
			if d.Call >= end {
				break
			}
			if d.Return < end {
				in++
			}
		}
		res.Windows++
		res.Worst = max(res.Worst, in)
		if in <= n {
			continue
		}
		if overlapsLoss(start.Call, end, losses) {
			res.OverLoss++
			continue
		}
		res.Over++
		if res.Example == "" {
			res.Example = fmt.Sprintf("%d admitted within %v from %s (limit %d)", in, window,
				time.UnixMicro(start.Call).Format("15:04:05.000000"), n)
		}
	}
	return res
}

func overlapsLoss(start, end int64, losses []Loss) bool {
	for _, l := range losses {
		if l.Start < end && l.End > start {
			return true
		}
	}
	return false
}
