package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/examples/internal/promtel"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/httprate"
)

// policy is what every key may do: both limits count every request, and a
// request is refused when either is spent.
var policy = ratelimit.Policy{
	ratelimit.SlidingLog(5, 2*time.Second).Named("burst"),
	ratelimit.SlidingCounter(20, time.Minute).Named("minute"),
}

type api struct {
	client  *redis.Client
	metrics *promtel.Metrics
	handler http.Handler // /hello behind the middleware; /metrics beside it
}

func newAPI(redisAddr, prefix string) (*api, error) {
	// ContextTimeoutEnabled: the middleware's Timeout bounds each decision
	// only if the client honours context deadlines on its socket.
	c := redis.NewClient(&redis.Options{Addr: redisAddr, ContextTimeoutEnabled: true})
	// Every decision, counted by outcome and by the limit that decided
	// (ratelimit.decisions), served at /metrics. Keys are not attributes:
	// one series per API key or client IP would grow without bound.
	metrics := promtel.New()
	tel, err := metrics.Telemetry("ratelimited-api", "")
	if err != nil {
		c.Close()
		return nil, err
	}
	limiter, err := ratelimit.New(goredisadapter.New(c), ratelimit.WithPrefix(prefix), ratelimit.WithHook(tel.RateLimit))
	if err != nil {
		c.Close()
		return nil, err
	}
	byIP, err := httprate.ClientIP(httprate.ClientIPConfig{}) // no proxy in front: X-Forwarded-For is ignored
	if err != nil {
		c.Close()
		return nil, err
	}
	m, err := httprate.New(httprate.Config{
		Limiter: limiter,
		Policy:  policy,
		Key:     keyOf(byIP),
		Timeout: 100 * time.Millisecond,
		// An outage of Redis should not take the API down with it, and
		// should show: httprate.requests counts the requests served
		// unmetered as failed_open, beside allowed and rejected.
		FailClosed: false,
		Hook:       tel.HTTPRate,
	})
	if err != nil {
		c.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	})
	// Scrapes are not rate-limited: the route sits outside the middleware.
	root := http.NewServeMux()
	root.Handle("GET /metrics", metrics.Handler())
	root.Handle("/", m.Handler(mux))
	return &api{client: c, metrics: metrics, handler: root}, nil
}

var apiKey = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// keyOf limits by API key, or by client IP for a request without a
// well-formed one. A malformed key is not an error (the middleware would
// answer 500): it is counted against the IP like no key at all.
func keyOf(byIP func(*http.Request) (string, error)) func(*http.Request) (string, error) {
	return func(r *http.Request) (string, error) {
		if k := r.Header.Get("X-API-Key"); apiKey.MatchString(k) {
			return "key:" + k, nil
		}
		ip, err := byIP(r)
		if err != nil {
			return "", err
		}
		return "ip:" + ip, nil
	}
}

// serve serves on ln until ctx ends, then shuts down gracefully.
func (a *api) serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: a.handler, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

func (a *api) close() error {
	return errors.Join(a.metrics.Shutdown(context.Background()), a.client.Close())
}
