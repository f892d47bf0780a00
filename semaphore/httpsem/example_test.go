package httpsem_test

import (
	"log"
	"net/http"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/semaphore"
	"github.com/redis-primitives/go/semaphore/httpsem"
)

// At most 4 exports per API key in flight; the fifth gets 429. Compiled,
// not run: it needs a Redis server.
func ExampleNew() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	sem, err := semaphore.New(rdb)
	if err != nil {
		log.Fatal(err)
	}
	limit, err := httpsem.New(httpsem.Config{
		Issuer:   sem,
		Key:      func(r *http.Request) (string, error) { return "exports:" + r.Header.Get("X-API-Key"), nil },
		Capacity: 4,
	})
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("/exports", limit.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// r.Context() ends if the permit can no longer be proven.
	})))
	log.Fatal(http.ListenAndServe(":8080", nil))
}
