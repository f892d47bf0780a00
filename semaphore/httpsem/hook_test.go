package httpsem_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/semaphore"
	"github.com/redis-primitives/go/semaphore/httpsem"
)

type requestID struct{}

// Every request that is not skipped reaches the Hook once, before its
// handler runs or its refusal is written, with the request's own context
// and the request itself, whatever the outcome: admitted (with its token),
// full (with the number in flight and the *semaphore.FullError), failed
// open and failed closed (Redis down, with the error), and error (Key
// failed: no acquire, so no latency; or an empty key). A skipped request
// does not reach it.
func TestHookSeesEveryOutcomeWithTheRequestAndItsContext(t *testing.T) {
	s := redistest.Start(t)
	up := newIssuer(t, s)
	port, err := redistest.FreePort() // nobody listens: every dial is refused
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	down, err := semaphore.New(goredisadapter.New(c))
	if err != nil {
		t.Fatal(err)
	}

	var (
		mu   sync.Mutex
		seen []httpsem.Event
		ctxs []context.Context
	)
	hook := func(ctx context.Context, e httpsem.Event) {
		mu.Lock()
		seen, ctxs = append(seen, e), append(ctxs, ctx)
		mu.Unlock()
	}
	last := func() any { // the id of the last request the hook was told about
		mu.Lock()
		defer mu.Unlock()
		if len(ctxs) == 0 {
			return nil
		}
		return ctxs[len(ctxs)-1].Value(requestID{})
	}
	errKey := errors.New("no tenant")
	key := func(r *http.Request) (string, error) {
		switch r.Header.Get("X-Client") {
		case "fail":
			return "", errKey
		case "empty":
			return "", nil
		}
		return byHeader(r)
	}
	var h http.Handler // the up middleware: a request to /hold sends one to /nested while it holds its permit
	newHandler := func(i *semaphore.Issuer, failClosed bool) http.Handler {
		m, err := httpsem.New(httpsem.Config{
			Issuer: i, Key: key, Capacity: 1, FailClosed: failClosed, Hook: hook,
			TTL:  300 * time.Millisecond, // a reclaim of an unanswered acquire ends with it
			Skip: func(r *http.Request) bool { return r.URL.Path == "/healthz" },
		})
		if err != nil {
			t.Fatal(err)
		}
		return m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if id := r.Context().Value(requestID{}); r.URL.Path != "/healthz" && last() != id {
				t.Errorf("%v served before the hook was told of it (last told: %v)", id, last())
			}
			if r.URL.Path == "/hold" {
				serve(t, h, "/nested", "a", "nested", http.StatusTooManyRequests)
			}
		}))
	}
	h = newHandler(up, false)
	open, closed := newHandler(down, false), newHandler(down, true)

	var sent []*http.Request
	for _, tc := range []struct {
		h          http.Handler
		path, c    string
		wantStatus int
	}{
		{h, "/healthz", "a", http.StatusOK},
		{h, "/hold", "a", http.StatusOK}, // and, inside it, /nested: 429
		{open, "/", "a", http.StatusOK},
		{closed, "/", "a", http.StatusServiceUnavailable},
		{h, "/", "fail", http.StatusInternalServerError},
		{h, "/", "empty", http.StatusInternalServerError},
	} {
		sent = append(sent, serve(t, tc.h, tc.path, tc.c, tc.path+" "+tc.c, tc.wantStatus))
	}

	want := []struct {
		outcome string
		path    string
		key     string
		id      string
		req     *http.Request // nil for the nested request, made in the handler
	}{
		{"admitted", "/hold", "client:a", "/hold a", sent[1]},
		{"full", "/nested", "client:a", "nested", nil},
		{"failed_open", "/", "client:a", "/ a", sent[2]},
		{"failed_closed", "/", "client:a", "/ a", sent[3]},
		{"error", "/", "", "/ fail", sent[4]},
		{"error", "/", "", "/ empty", sent[5]},
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != len(want) {
		t.Fatalf("%d events, want %d (the skipped request is not one): %+v", len(seen), len(want), seen)
	}
	for i, w := range want {
		e := seen[i]
		t.Logf("event %d: %s %s key=%q token=%d in_flight=%d latency=%v err=%v", i, e.Outcome, e.Request.URL.Path, e.Key, e.Token, e.InFlight, e.Latency, e.Err)
		if e.Outcome != w.outcome || e.Key != w.key || e.Request == nil || e.Request.URL.Path != w.path {
			t.Fatalf("event %d: %s %q for %v, want %s %q for %s", i, e.Outcome, e.Key, e.Request, w.outcome, w.key, w.path)
		}
		if w.req != nil && e.Request != w.req {
			t.Fatalf("event %d (%s): Request is not the request served", i, e.Outcome)
		}
		if ctxs[i] != e.Request.Context() || ctxs[i].Value(requestID{}) != w.id {
			t.Fatalf("event %d (%s): hook's context (request %v) is not the request's (%s)", i, e.Outcome, ctxs[i].Value(requestID{}), w.id)
		}
	}
	admitted, full, failedOpen, failedClosed, keyFailed, empty := seen[0], seen[1], seen[2], seen[3], seen[4], seen[5]
	if admitted.Token <= 0 || admitted.InFlight != 0 || admitted.Latency <= 0 || admitted.Err != nil {
		t.Fatalf("admitted: %+v, want a token, a latency and no error", admitted)
	}
	var fullErr *semaphore.FullError
	if full.Token != 0 || full.InFlight != 1 || full.Latency <= 0 || !errors.As(full.Err, &fullErr) || fullErr.Holders != 1 {
		t.Fatalf("full: %+v, want 1 in flight, a latency and a *semaphore.FullError", full)
	}
	for _, e := range []httpsem.Event{failedOpen, failedClosed} {
		if e.Err == nil || errors.Is(e.Err, semaphore.ErrFull) || e.Latency <= 0 || e.Token != 0 {
			t.Fatalf("%s: %+v, want Redis's error and a latency", e.Outcome, e)
		}
	}
	if !errors.Is(keyFailed.Err, errKey) || keyFailed.Latency != 0 {
		t.Fatalf("Key failed: %+v, want Key's error and no acquire (zero latency)", keyFailed)
	}
	if !errors.Is(empty.Err, semaphore.ErrInvalidName) {
		t.Fatalf("empty key: %+v, want semaphore.ErrInvalidName", empty)
	}
}

// serve sends one request through h with X-Client client and a context
// carrying id, checks its status and returns it.
func serve(t *testing.T, h http.Handler, path, client, id string, want int) *http.Request {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, path, nil)
	r = r.WithContext(context.WithValue(r.Context(), requestID{}, id))
	r.Header.Set("X-Client", client)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != want {
		t.Errorf("%s (client %s): %d, want %d", path, client, w.Code, want)
	}
	return r
}
