package httprate_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/httprate"
)

func ExampleNew() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	limiter, err := ratelimit.New(goredisadapter.New(rdb))
	if err != nil {
		log.Fatal(err)
	}
	key, err := httprate.ClientIP(httprate.ClientIPConfig{TrustedProxies: []string{"10.0.0.0/8"}}) // the load balancers
	if err != nil {
		log.Fatal(err)
	}
	m, err := httprate.New(httprate.Config{
		Limiter:    limiter,
		Policy:     ratelimit.Policy{ratelimit.SlidingLog(100, time.Minute).Named("api")},
		Key:        key,
		Timeout:    50 * time.Millisecond,
		FailClosed: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hello") })
	log.Fatal(http.ListenAndServe(":8080", m.Handler(mux)))
}

func ExampleClientIP() {
	key, _ := httprate.ClientIP(httprate.ClientIPConfig{TrustedProxies: []string{"10.0.0.0/8"}})
	r, _ := http.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.1.2.3:40000" // a trusted proxy
	r.Header.Set("X-Forwarded-For", "6.6.6.6, 198.51.100.4")
	ip, _ := key(r)
	fmt.Println(ip)
	// Output: 198.51.100.4
}

func ExampleClientIP_ports() {
	key, _ := httprate.ClientIP(httprate.ClientIPConfig{TrustedProxies: []string{"10.0.0.0/8"}})
	r, _ := http.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.1.2.3:40000" // a load balancer that writes ports
	r.Header.Set("X-Forwarded-For", "[2001:db8::1]:4711, 10.4.5.6:443")
	ip, _ := key(r)
	fmt.Println(ip) // an IPv6 client is keyed by its /64
	// Output: 2001:db8::/64
}

// Behind proxies that write RFC 7239 Forwarded rather than
// X-Forwarded-For.
func ExampleClientIP_forwarded() {
	key, _ := httprate.ClientIP(httprate.ClientIPConfig{TrustedProxies: []string{"10.0.0.0/8"}, Header: "Forwarded"})
	r, _ := http.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.1.2.3:40000" // a trusted proxy
	r.Header.Set("Forwarded", `for=6.6.6.6, for="[2001:db8:cafe::17]:4711";proto=https`)
	ip, _ := key(r)
	fmt.Println(ip)
	// Output: 2001:db8:cafe::/64
}

// A proxy that writes a header of its own, here Cloudflare's, is trusted
// as for X-Forwarded-For; IPv6 clients keyed by their /56 (a home
// network's whole delegation), IPv4 ones by their /24.
func ExampleClientIP_ownHeader() {
	key, err := httprate.ClientIP(httprate.ClientIPConfig{
		TrustedProxies: []string{"173.245.48.0/20", "2400:cb00::/32"},
		Header:         "CF-Connecting-IP",
		IPv6Prefix:     56,
		IPv4Prefix:     24,
	})
	if err != nil {
		log.Fatal(err)
	}
	r, _ := http.NewRequest("GET", "/", nil)
	r.RemoteAddr = "[2400:cb00::7]:443" // the proxy
	r.Header.Set("CF-Connecting-IP", "2001:db8:aa:bb01::9")
	ip, _ := key(r)
	fmt.Println(ip)
	r.Header.Set("CF-Connecting-IP", "198.51.100.77")
	ip, _ = key(r)
	fmt.Println(ip)
	// Output:
	// 2001:db8:aa:bb00::/56
	// 198.51.100.0/24
}

// A handler that asks the limiter itself sends the fields the middleware
// would: RateLimit-Policy, each limit's quota, and RateLimit, what each has
// left.
func ExampleFields() {
	policy := ratelimit.Policy{
		ratelimit.SlidingLog(100, time.Minute).Named("default"),
		ratelimit.SlidingCounter(5000, 24*time.Hour).Named("daily"),
		// 1 per second, 20 at once: q is the burst, w the time to earn it back.
		ratelimit.GCRA(1, time.Second, 20).Named("burst"),
	}
	res := ratelimit.Result{ // as limiter.Allow(ctx, key, policy) answers
		Allowed: true, Limit: policy[0], Remaining: 42, ResetAfter: 6500 * time.Millisecond,
		Each: []ratelimit.Result{
			{Allowed: true, Limit: policy[0], Remaining: 42, ResetAfter: 6500 * time.Millisecond},
			{Allowed: true, Limit: policy[1], Remaining: 4900, ResetAfter: 20 * time.Hour},
			{Allowed: true, Limit: policy[2], Remaining: 19, ResetAfter: time.Second},
		},
	}
	policyField, limitField := httprate.Fields(policy, res)
	fmt.Println("RateLimit-Policy:", policyField)
	fmt.Println("RateLimit:", limitField)
	// Output:
	// RateLimit-Policy: "default";q=100;w=60, "daily";q=5000;w=86400, "burst";q=20;w=20
	// RateLimit: "default";r=42;t=7, "daily";r=4900;t=72000, "burst";r=19;t=1
}

func ExampleMiddleware_Handler() {
	var m *httprate.Middleware // from httprate.New
	if m != nil {
		http.Handle("/api/", m.Handler(http.NotFoundHandler()))
	}
}

// show serves one request through h and prints its status and the headers
// named.
func show(h http.Handler, method, target string, header ...string) {
	r := httptest.NewRequest(method, target, nil) // from 192.0.2.1
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Print(method, " ", target, " ", w.Code)
	for _, name := range header {
		if v := w.Header().Get(name); v != "" {
			fmt.Printf(" %s: %s", name, v)
		}
	}
	fmt.Println()
}

var hello = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hello") })

// Each route gets its own middleware and policy. The key names the route as
// well as the client: a limit's state is named after the key and the
// limit's parameters, not its name, so two routes with the same limit on a
// bare client IP would share one count.
func Example_perRoute() {
	byIP, err := httprate.ClientIP(httprate.ClientIPConfig{})
	if err != nil {
		log.Fatal(err)
	}
	route := func(name string, policy ratelimit.Policy) func(http.Handler) http.Handler {
		m, err := httprate.New(httprate.Config{
			Limiter: limiter, // ratelimit.New(goredisadapter.New(rdb))
			Policy:  policy,
			Key: func(r *http.Request) (string, error) {
				ip, err := byIP(r)
				return name + ":" + ip, err
			},
		})
		if err != nil {
			log.Fatal(err)
		}
		return m.Handler
	}
	search := route("search", ratelimit.Policy{ratelimit.SlidingLog(2, time.Minute).Named("search")})
	upload := route("upload", ratelimit.Policy{
		ratelimit.GCRA(1, time.Minute, 1).Named("upload"),
		ratelimit.SlidingCounter(100, 24*time.Hour).Named("daily"),
	})

	mux := http.NewServeMux()
	mux.Handle("GET /search", search(hello))
	mux.Handle("POST /upload", upload(hello))
	mux.Handle("GET /healthz", hello) // not limited

	show(mux, "GET", "/search", "RateLimit")
	show(mux, "GET", "/search", "RateLimit")
	show(mux, "POST", "/upload", "RateLimit-Policy")
	show(mux, "GET", "/search", "RateLimit")
	show(mux, "POST", "/upload", "Retry-After")
	show(mux, "GET", "/healthz", "RateLimit")
	// Output:
	// GET /search 200 RateLimit: "search";r=1;t=60
	// GET /search 200 RateLimit: "search";r=0;t=60
	// POST /upload 200 RateLimit-Policy: "upload";q=1;w=60, "daily";q=100;w=86400
	// GET /search 429 RateLimit: "search";r=0;t=60
	// POST /upload 429 Retry-After: 60
	// GET /healthz 200
}

func ExampleConfig_skip() {
	m, err := httprate.New(httprate.Config{
		Limiter: limiter,
		Policy:  ratelimit.Policy{ratelimit.SlidingLog(1, time.Minute)},
		Key:     func(*http.Request) (string, error) { return "example-skip", nil },
		// Probes and callers on the internal network are not limited.
		Skip: func(r *http.Request) bool {
			return r.URL.Path == "/healthz" || r.Header.Get("X-Internal-Caller") != ""
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	h := m.Handler(hello)
	show(h, "GET", "/healthz")
	show(h, "GET", "/healthz")
	show(h, "GET", "/")
	show(h, "GET", "/")
	// Output:
	// GET /healthz 200
	// GET /healthz 200
	// GET / 200
	// GET / 429
}

func ExampleConfig_cost() {
	m, err := httprate.New(httprate.Config{
		Limiter: limiter,
		Policy:  ratelimit.Policy{ratelimit.SlidingLog(100, time.Minute).Named("rows")},
		Key:     func(*http.Request) (string, error) { return "example-cost", nil },
		// A batch counts for its rows, all or none.
		Cost: func(r *http.Request) (int, error) {
			return strconv.Atoi(r.URL.Query().Get("rows"))
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	h := m.Handler(hello)
	show(h, "POST", "/import?rows=60", "RateLimit")
	show(h, "POST", "/import?rows=60", "RateLimit")
	show(h, "POST", "/import?rows=40", "RateLimit")
	// Output:
	// POST /import?rows=60 200 RateLimit: "rows";r=40;t=60
	// POST /import?rows=60 429 RateLimit: "rows";r=40;t=60
	// POST /import?rows=40 200 RateLimit: "rows";r=0;t=60
}

func ExampleConfig_limited() {
	m, err := httprate.New(httprate.Config{
		Limiter: limiter,
		Policy:  ratelimit.Policy{ratelimit.SlidingLog(1, time.Minute).Named("api")},
		Key:     func(*http.Request) (string, error) { return "example-limited", nil },
		// The API's own error format instead of problem+json.
		Limited: func(w http.ResponseWriter, r *http.Request, res ratelimit.Result) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprintf(w, `{"error":"rate_limited","limit":%q}`+"\n", res.Limit.Name())
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	h := m.Handler(hello)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	fmt.Print(w.Code, " Retry-After: ", w.Header().Get("Retry-After"), " ", w.Body.String())
	// Output: 429 Retry-After: 60 {"error":"rate_limited","limit":"api"}
}

func ExampleConfig_legacyHeaders() {
	m, err := httprate.New(httprate.Config{
		Limiter:       limiter,
		Policy:        ratelimit.Policy{ratelimit.GCRA(10, time.Second, 50)},
		Key:           func(*http.Request) (string, error) { return "example-legacy", nil },
		LegacyHeaders: "seconds",
	})
	if err != nil {
		log.Fatal(err)
	}
	show(m.Handler(hello), "GET", "/", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")
	// Output: GET / 200 X-RateLimit-Limit: 50 X-RateLimit-Remaining: 49 X-RateLimit-Reset: 1
}

func ExampleEvent() {
	m, err := httprate.New(httprate.Config{
		Limiter: limiter,
		Policy: ratelimit.Policy{
			ratelimit.SlidingLog(2, time.Minute).Named("minute"),
			ratelimit.SlidingCounter(1000, 24*time.Hour).Named("day"),
		},
		Key: func(*http.Request) (string, error) { return "example-decision", nil },
		// Metrics, traces or audit logs: every decision with its facts, and
		// the request's context (its span, for a trace).
		Hook: func(_ context.Context, e httprate.Event) {
			fmt.Printf("%s %s key=%s limit=%s remaining=%d measured=%t\n",
				e.Request.Method, e.Outcome, e.Key, e.Result.Limit.Name(), e.Result.Remaining, e.Latency > 0)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	h := m.Handler(hello)
	for range 3 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	}
	// Output:
	// GET allowed key=example-decision limit=minute remaining=1 measured=true
	// GET allowed key=example-decision limit=minute remaining=0 measured=true
	// GET rejected key=example-decision limit=minute remaining=0 measured=true
}

// With a Logger, an operator sees the limiter failing open or closed (and
// requests that could not be metered); nothing is logged without one.
func ExampleConfig_logger() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		// Stable output for this example: no time, no error text.
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "error" || a.Key == "latency" {
				return slog.Attr{}
			}
			return a
		},
	}))
	m, err := httprate.New(httprate.Config{
		Limiter: limiter,
		Policy:  ratelimit.Policy{ratelimit.SlidingLog(1, time.Minute)},
		// A key function that fails: the request cannot be metered.
		Key:    func(*http.Request) (string, error) { return "", errors.New("no API key") },
		Logger: logger,
	})
	if err != nil {
		log.Fatal(err)
	}
	show(m.Handler(hello), "GET", "/")
	// Output:
	// level=ERROR msg="httprate: request could not be metered, refused with 500" outcome=error method=GET path=/
	// GET / 500
}
