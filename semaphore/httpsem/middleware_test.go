package httpsem_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/semaphore"
	"github.com/redis-primitives/go/semaphore/httpsem"
)

func newIssuer(t *testing.T, s *redistest.Server) *semaphore.Issuer {
	t.Helper()
	i, err := semaphore.New(goredisadapter.New(s.Client(t)), semaphore.WithPrefix(s.Prefix()+"semaphore:"))
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func byHeader(r *http.Request) (string, error) { return "client:" + r.Header.Get("X-Client"), nil }

// newServer serves handler behind the middleware made from cfg.
func newServer(t *testing.T, cfg httpsem.Config, handler http.Handler) *httptest.Server {
	t.Helper()
	m, err := httpsem.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m.Handler(handler))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url, client string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Client", client)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Three requests of one client against a capacity of 2 while both places
// are busy: the third is refused with 429, Retry-After and a problem+json
// body; another client is not affected; once the handlers return, every
// place is back.
func TestAtMostCapacityRequestsPerKeyAreInFlightAndTheRestGet429(t *testing.T) {
	s := redistest.Start(t)
	i := newIssuer(t, s)
	entered, proceed := make(chan struct{}, 8), make(chan struct{})
	srv := newServer(t, httpsem.Config{Issuer: i, Key: byHeader, Capacity: 2}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-proceed
	}))
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if res := get(t, srv.URL, "a"); res.StatusCode != http.StatusOK {
				t.Errorf("admitted request: %d", res.StatusCode)
			}
		})
	}
	<-entered
	<-entered
	res := get(t, srv.URL, "a")
	var body struct {
		Status int    `json:"status"`
		Detail string `json:"detail"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	t.Logf("third request of client a: %d, Retry-After %q, %s: %+v", res.StatusCode, res.Header.Get("Retry-After"), res.Header.Get("Content-Type"), body)
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "1" ||
		res.Header.Get("Content-Type") != "application/problem+json" || body.Status != 429 {
		t.Fatalf("third request: %d %v %+v, want 429 with Retry-After 1 and a problem+json body", res.StatusCode, res.Header, body)
	}
	other := make(chan int, 1)
	go func() { r := get(t, srv.URL, "b"); r.Body.Close(); other <- r.StatusCode }()
	<-entered // client b's request runs while a's two do
	close(proceed)
	wg.Wait()
	if code := <-other; code != http.StatusOK {
		t.Fatalf("client b: %d", code)
	}
	for _, key := range []string{"client:a", "client:b"} {
		if h, err := i.Holders(context.Background(), key); err != nil || len(h) != 0 {
			t.Fatalf("%s: %d permits live after every handler returned (%v)", key, len(h), err)
		}
	}
}

// A handler that panics still gives its place back.
func TestAPanickingHandlerGivesItsPlaceBack(t *testing.T) {
	s := redistest.Start(t)
	i := newIssuer(t, s)
	srv := newServer(t, httpsem.Config{Issuer: i, Key: byHeader, Capacity: 1}, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic(http.ErrAbortHandler) // net/http's own: aborts the response without a log line
	}))
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("X-Client", "a")
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
	}
	if h, err := i.Holders(context.Background(), "client:a"); err != nil || len(h) != 0 {
		t.Fatalf("%d permits live after the handler panicked (%v)", len(h), err)
	}
}

// A handler that runs for several TTLs keeps its place the whole time: the
// permit is renewed (every third of the TTL, so two renewals may be late
// before it lapses), and a second request meanwhile is refused.
func TestAHandlerRunningPastTheTTLKeepsItsPlace(t *testing.T) {
	s := redistest.Start(t)
	i := newIssuer(t, s)
	const ttl = 300 * time.Millisecond
	var admitted atomic.Int32
	entered, proceed := make(chan struct{}, 1), make(chan struct{})
	srv := newServer(t, httpsem.Config{Issuer: i, Key: byHeader, Capacity: 1, TTL: ttl}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if admitted.Add(1) > 1 {
			w.WriteHeader(http.StatusConflict) // a second request got in: the first one's place was lost
			return
		}
		entered <- struct{}{}
		select {
		case <-proceed:
		case <-r.Context().Done():
			w.WriteHeader(http.StatusGatewayTimeout) // the permit was lost
		}
	}))
	done := make(chan int, 1)
	go func() { r := get(t, srv.URL, "a"); r.Body.Close(); done <- r.StatusCode }()
	<-entered
	start := time.Now()
	for time.Since(start) < 4*ttl {
		res := get(t, srv.URL, "a")
		res.Body.Close()
		if res.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("second request %v into a running one: %d, want 429", time.Since(start), res.StatusCode)
		}
		time.Sleep(ttl / 5)
	}
	close(proceed)
	if code := <-done; code != http.StatusOK {
		t.Fatalf("the long request: %d, want 200 (its permit was kept)", code)
	}
}

func TestNewRefusesAConfigThatCannotWork(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	i, err := semaphore.New(goredisadapter.New(c))
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []httpsem.Config{
		{Key: byHeader, Capacity: 1},
		{Issuer: i, Capacity: 1},
		{Issuer: i, Key: byHeader},
		{Issuer: i, Key: byHeader, Capacity: 1, TTL: time.Millisecond},
		{Issuer: i, Key: byHeader, Capacity: 1, Timeout: -1},
		// An acquire that may take the whole lease can return a permit
		// already expired.
		{Issuer: i, Key: byHeader, Capacity: 1, TTL: time.Second, Timeout: time.Second},
		{Issuer: i, Key: byHeader, Capacity: 1, TTL: 50 * time.Millisecond}, // the default Timeout, 100ms
	} {
		if _, err := httpsem.New(cfg); !errors.Is(err, httpsem.ErrInvalidConfig) {
			t.Errorf("New(%+v): %v, want ErrInvalidConfig", cfg, err)
		}
	}
}
