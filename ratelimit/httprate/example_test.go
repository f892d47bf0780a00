package httprate_test

import (
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/httprate"
)

func ExampleNew() {
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	limiter, err := ratelimit.New(client)
	if err != nil {
		log.Fatal(err)
	}
	key, err := httprate.ClientIP("10.0.0.0/8") // the load balancers
	if err != nil {
		log.Fatal(err)
	}
	m, err := httprate.New(httprate.Config{
		Limiter:     limiter,
		Policy:      ratelimit.Policy{ratelimit.SlidingLog(100, time.Minute).Named("api")},
		Key:         key,
		Timeout:     50 * time.Millisecond,
		Unavailable: httprate.FailClosed,
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hello") })
	log.Fatal(http.ListenAndServe(":8080", m.Handler(mux)))
}

func ExampleClientIP() {
	key, _ := httprate.ClientIP("10.0.0.0/8")
	r, _ := http.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.1.2.3:40000" // a trusted proxy
	r.Header.Set("X-Forwarded-For", "6.6.6.6, 198.51.100.4")
	ip, _ := key(r)
	fmt.Println(ip)
	// Output: 198.51.100.4
}

func ExampleClientIP_ports() {
	key, _ := httprate.ClientIP("10.0.0.0/8")
	r, _ := http.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.1.2.3:40000" // a load balancer that writes ports
	r.Header.Set("X-Forwarded-For", "[2001:db8::1]:4711, 10.4.5.6:443")
	ip, _ := key(r)
	fmt.Println(ip)
	// Output: 2001:db8::1
}

func ExampleClientIPFromForwarded() {
	key, _ := httprate.ClientIPFromForwarded("10.0.0.0/8")
	r, _ := http.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.1.2.3:40000" // a trusted proxy
	r.Header.Set("Forwarded", `for=6.6.6.6, for="[2001:db8:cafe::17]:4711";proto=https`)
	ip, _ := key(r)
	fmt.Println(ip)
	// Output: 2001:db8:cafe::17
}

func ExamplePolicyField() {
	fmt.Println(httprate.PolicyField(ratelimit.Policy{
		ratelimit.SlidingLog(100, time.Minute).Named("default"),
		ratelimit.SlidingCounter(5000, 24*time.Hour).Named("daily"),
		// 1 per second, 20 at once: q is the burst, w the time to earn it back.
		ratelimit.GCRA(1, time.Second, 20).Named("burst"),
	}))
	// Output: "default";q=100;w=60, "daily";q=5000;w=86400, "burst";q=20;w=20
}

func ExampleField() {
	res := ratelimit.Result{
		Allowed:    true,
		Limit:      ratelimit.SlidingLog(100, time.Minute).Named("default"),
		Remaining:  42,
		ResetAfter: 6500 * time.Millisecond,
	}
	fmt.Println(httprate.Field(res))
	// Output: "default";r=42;t=7
}

func ExampleMiddleware_Handler() {
	var m *httprate.Middleware // from httprate.New
	if m != nil {
		http.Handle("/api/", m.Handler(http.NotFoundHandler()))
	}
}
