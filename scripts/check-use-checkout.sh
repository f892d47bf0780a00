#!/usr/bin/env bash
# Proves the try-before-the-tag command (scripts/use-checkout.sh) as a new
# user would run it: a scratch module outside the repository, with the oldest
# Go and go-redis the library modules declare (lock's go line and
# goredisadapter's go-redis requirement), imports lock and ratelimit on
# go-redis through goredisadapter, is pointed at this checkout by
# use-checkout.sh, then builds and vets. Nothing of this repository comes
# from a proxy: go.work maps every one of its modules to a directory.
set -euo pipefail
cd "$(dirname "$0")/.."
checkout=$(pwd)
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

gover=$(GOTOOLCHAIN=local go mod edit -json lock/go.mod | sed -n 's/^\t"Go": "\(.*\)",*$/\1/p')
goredis=$(GOTOOLCHAIN=local go mod edit -json goredisadapter/go.mod | tr -d '\n\t ' |
	grep -o '{"Path":"github.com/redis/go-redis/v9","Version":"[^"]*"' | sed 's/.*"Version":"//; s/"$//')

app="$tmp/app"
mkdir -p "$app"
cat >"$app/main.go" <<'GO'
// A service that uses lock and ratelimit before they are tagged.
package main

import (
	"context"
	"log"
	"time"

	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/lock"
	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis/go-redis/v9"
)

func main() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	defer rdb.Close()
	client := goredisadapter.New(rdb)
	locker, err := lock.New(client)
	if err != nil {
		log.Fatal(err)
	}
	limiter, err := ratelimit.New(client)
	if err != nil {
		log.Fatal(err)
	}
	_ = limiter
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	lease, err := locker.Acquire(ctx, "job", 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	defer locker.Release(context.Background(), lease)
}
GO

export GOTOOLCHAIN="go$gover" GOWORK=
cd "$app"
go mod init example.com/app >/dev/null 2>&1
go mod edit -go="$gover"
go get "github.com/redis/go-redis/v9@$goredis" >/dev/null 2>&1 ||
	{ echo "try-checkout: go get go-redis $goredis failed"; go get "github.com/redis/go-redis/v9@$goredis"; exit 1; }

"$checkout/scripts/use-checkout.sh" "$app" >/dev/null
"$checkout/scripts/use-checkout.sh" "$app" >/dev/null # a second run changes nothing that breaks
go build -o /dev/null .
go vet .
got=$(go list -m -f '{{.Version}}' github.com/redis/go-redis/v9)
if [ "$got" != "$goredis" ]; then
	echo "try-checkout: built with go-redis $got, not the floor $goredis"; exit 1
fi
if go list -m github.com/redis-primitives/go/fence/pgfence >/dev/null 2>&1 &&
	[ -n "$(go list -deps . | grep -E '^github.com/jackc/pgx' || true)" ]; then
	echo "try-checkout: a build of lock and ratelimit links pgx"; exit 1
fi
if [ -n "$(go list -deps . | grep -E '^github.com/(redis/rueidis|valkey-io/valkey-go)' || true)" ]; then
	echo "try-checkout: a build of lock and ratelimit on go-redis links rueidis or valkey-go"; exit 1
fi
echo "try-checkout: a module outside the repository built lock and ratelimit from this checkout with $(go env GOVERSION) and go-redis $got"
