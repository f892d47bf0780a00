package httprate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/redis-primitives/go/ratelimit"
)

// DefaultTimeout bounds each decision when Config.Timeout is zero.
const DefaultTimeout = 100 * time.Millisecond

// Unavailable says what to do with a request when Redis cannot decide.
type Unavailable int

const (
	// FailOpen serves the request unmetered. The default.
	FailOpen Unavailable = iota
	// FailClosed answers 503 Service Unavailable.
	FailClosed
)

// ErrInvalidConfig is returned by New for a Config that cannot work.
var ErrInvalidConfig = errors.New("httprate: invalid config")

// Config configures the middleware. Limiter, Policy and Key are required.
type Config struct {
	Limiter *ratelimit.Limiter
	// Policy is checked for every request; limit names become the policy
	// identifiers in the headers.
	Policy ratelimit.Policy
	// Key maps a request to the key it is limited by, such as a client IP
	// (see ClientIP), an API key or a user id. An error answers 500.
	Key func(*http.Request) (string, error)
	// Timeout bounds the Redis call of one decision. Zero means
	// DefaultTimeout.
	Timeout time.Duration
	// Unavailable is the policy when Redis fails or times out. The zero
	// value is FailOpen.
	Unavailable Unavailable
	// OnError, if set, is told about every failure to decide (store errors
	// and key errors), for logging.
	OnError func(*http.Request, error)
}

// Middleware rate-limits the handlers it wraps.
type Middleware struct {
	cfg    Config
	policy string // RateLimit-Policy value, the same on every response
}

// New validates cfg and returns the middleware.
func New(cfg Config) (*Middleware, error) {
	switch {
	case cfg.Limiter == nil:
		return nil, fmt.Errorf("%w: no Limiter", ErrInvalidConfig)
	case len(cfg.Policy) == 0:
		return nil, fmt.Errorf("%w: empty Policy", ErrInvalidConfig)
	case cfg.Key == nil:
		return nil, fmt.Errorf("%w: no Key function", ErrInvalidConfig)
	case cfg.Timeout < 0:
		return nil, fmt.Errorf("%w: negative Timeout", ErrInvalidConfig)
	case cfg.Unavailable != FailOpen && cfg.Unavailable != FailClosed:
		return nil, fmt.Errorf("%w: Unavailable %d", ErrInvalidConfig, cfg.Unavailable)
	}
	if err := cfg.Policy.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	return &Middleware{cfg: cfg, policy: PolicyField(cfg.Policy)}, nil
}

// Handler wraps next.
func (m *Middleware) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := m.cfg.Key(r)
		if err != nil {
			m.report(r, err)
			problem(w, http.StatusInternalServerError, "Internal Server Error", "the request could not be mapped to a rate-limit key")
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), m.cfg.Timeout)
		res, err := m.cfg.Limiter.Allow(ctx, key, m.cfg.Policy)
		cancel()
		if err != nil {
			m.report(r, err)
			if refused(err) {
				// Not an outage: the request itself cannot be metered (an
				// empty key). Serving it would let a client opt out of the
				// limit by sending what maps to no key.
				problem(w, http.StatusInternalServerError, "Internal Server Error", "the request could not be mapped to a rate-limit key")
				return
			}
			if m.cfg.Unavailable == FailClosed {
				w.Header().Set("Retry-After", "1")
				problem(w, http.StatusServiceUnavailable, "Service Unavailable", "the rate limiter cannot decide right now")
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("RateLimit-Policy", m.policy)
		h.Set("RateLimit", Field(res))
		if !res.Allowed {
			h.Set("Retry-After", strconv.FormatInt(seconds(res.RetryAfter), 10))
			problem(w, http.StatusTooManyRequests, "Too Many Requests",
				fmt.Sprintf("rate limit %q exceeded; retry after %v", res.Limit.Name(), res.RetryAfter))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refused reports whether the limiter rejected its input, as opposed to
// Redis failing to answer: only the latter is what Unavailable is for.
func refused(err error) bool {
	return errors.Is(err, ratelimit.ErrInvalidKey) || errors.Is(err, ratelimit.ErrInvalidN) ||
		errors.Is(err, ratelimit.ErrInvalidLimit)
}

func (m *Middleware) report(r *http.Request, err error) {
	if m.cfg.OnError != nil {
		m.cfg.OnError(r, err)
	}
}

// PolicyField formats the RateLimit-Policy field for p: one item per limit,
// named by Limit.Name, with q, its quota, and w, its window in seconds (left
// out when it is not a whole number of seconds, since w is an integer). The
// package documentation gives q and w for each algorithm.
func PolicyField(p ratelimit.Policy) string {
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

// Field formats the RateLimit field for a decision: for each limit, r (the
// requests remaining) and t (seconds until it is full again, rounded up).
func Field(res ratelimit.Result) string {
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

// problem writes an RFC 9457 problem details body.
func problem(w http.ResponseWriter, status int, title, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		Type   string `json:"type"`
		Title  string `json:"title"`
		Status int    `json:"status"`
		Detail string `json:"detail"`
	}{"about:blank", title, status, detail})
}
