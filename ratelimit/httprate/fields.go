package httprate

import (
	"math"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/redis-primitives/go/ratelimit"
)

// Fields formats the two fields the middleware sends with a decision of
// policy p, for a handler or a server of another protocol that asks a
// ratelimit.Limiter itself: policy is the RateLimit-Policy field, the
// quota of each limit of p, and limit the RateLimit field, what each has
// left after res (its Each, or res itself for a Policy of one limit). The
// package documentation says what their q, w, r and t are for each
// algorithm.
func Fields(p ratelimit.Policy, res ratelimit.Result) (policy, limit string) {
	return policyField(p), field(res)
}

// policyField formats the RateLimit-Policy field for p: one item per limit,
// named by Limit.Name, with q, its quota, and w, its window in seconds (left
// out when it is not a whole number of seconds, since w is an integer). The
// package documentation gives q and w for each algorithm.
func policyField(p ratelimit.Policy) string {
	items := make([]string, len(p))
	for i, l := range p {
		q, w := quota(l)
		item := quote(l.Name()) + ";q=" + strconv.Itoa(q)
		if w%time.Second == 0 {
			item += ";w=" + strconv.FormatInt(int64(w/time.Second), 10)
		}
		items[i] = item
	}
	return strings.Join(items, ", ")
}

// quota returns the q and w that the RateLimit field's r and t count
// against: the most l admits at once, and how long l takes to go from none
// remaining back to q. For the log and the counter that is N per Window;
// GCRA admits its burst at once and earns it back in burst periods of
// Window/N, so q is the burst and w is burst·Window/N, rounded up to the
// nanosecond (so that w is whole seconds only when it is exactly).
func quota(l ratelimit.Limit) (q int, w time.Duration) {
	if l.Algorithm() != ratelimit.AlgorithmGCRA {
		return l.N(), l.Window()
	}
	// burst·Window can pass 2^63 ns; the quotient, at most the key's TTL,
	// cannot.
	var x, rem big.Int
	x.Mul(big.NewInt(int64(l.Window())), big.NewInt(int64(l.Burst())))
	x.QuoRem(&x, big.NewInt(int64(l.N())), &rem)
	w = time.Duration(x.Int64())
	if rem.Sign() != 0 {
		w++
	}
	return l.Burst(), w
}

// field formats the RateLimit field for a decision: for each limit, r (the
// requests remaining) and t (seconds until it is full again, rounded up).
func field(res ratelimit.Result) string {
	each := res.Each
	if len(each) == 0 {
		each = []ratelimit.Result{res}
	}
	items := make([]string, len(each))
	for i, e := range each {
		items[i] = quote(e.Limit.Name()) + ";r=" + strconv.Itoa(e.Remaining) + ";t=" + strconv.FormatInt(seconds(e.ResetAfter), 10)
	}
	return strings.Join(items, ", ")
}

// seconds rounds d up to whole seconds: a client told to wait must not come
// back early.
func seconds(d time.Duration) int64 {
	return int64(math.Ceil(d.Seconds()))
}

// quote writes s as a structured-field String: printable ASCII, with '"'
// and '\' escaped; other bytes are replaced by '?'.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c > 0x7e:
			b.WriteByte('?')
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// The values of Config.LegacyHeaders, listed in its doc.
const (
	legacySeconds = "seconds"
	legacyUnix    = "unix"
)

// setLegacy sets the X-RateLimit-* headers for res's binding limit.
func setLegacy(h http.Header, mode string, res ratelimit.Result, now time.Time) {
	q, _ := quota(res.Limit)
	reset := seconds(res.ResetAfter)
	if mode == legacyUnix {
		ns := now.UnixNano() + int64(res.ResetAfter)
		reset = (ns + int64(time.Second) - 1) / int64(time.Second)
	}
	h.Set("X-RateLimit-Limit", strconv.Itoa(q))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(res.Remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset, 10))
}
