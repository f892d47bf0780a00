package pgfencetel_test

import (
	"log"

	"github.com/redis-primitives/go/fence/pgfence"
	"github.com/redis-primitives/go/telemetry"
	"github.com/redis-primitives/go/telemetry/pgfencetel"
)

func ExampleHook() {
	tel, err := telemetry.New() // otel's global providers
	if err != nil {
		log.Fatal(err)
	}
	store, err := pgfence.New(pgfence.WithHook(pgfencetel.Hook(tel)))
	if err != nil {
		log.Fatal(err)
	}
	_ = store
}
