#!/usr/bin/env bash
# `go mod tidy` ignores go.work, so on its own it cannot resolve the sibling
# modules at their unreleased v0.1.0. This runs it per module against the
# working tree published into a local proxy (scripts/localproxy.go), then
# drops the go.sum lines of this repository's own modules: those hashes are
# of the local snapshot, not of a release.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tmp=$(mktemp -d)
cache=$(go env GOMODCACHE)
# The module cache keys a module by version, so a snapshot published as
# v0.1.0 must not outlive this run, or the next run would read it back.
forget() {
	chmod -R u+w "$cache/github.com/redis-primitives" "$cache/cache/download/github.com/redis-primitives" 2>/dev/null || true
	rm -rf "$cache/github.com/redis-primitives" "$cache/cache/download/github.com/redis-primitives" "$tmp"
}
trap forget EXIT
forget; tmp=$(mktemp -d)
go run scripts/localproxy.go -out "$tmp/proxy" -version v0.1.0
prefix=github.com/redis-primitives/go
for dir in ${@:-$(scripts/modules.sh)}; do
	echo "== $dir"
	(
		cd "$dir"
		GOWORK=off GOFLAGS=-mod=mod GONOSUMDB=$prefix GONOSUMCHECK=1 \
			GOPROXY="file://$tmp/proxy,${GOPROXY:-https://proxy.golang.org}" go mod tidy
		if [ -f go.sum ]; then
			grep -v "^$prefix/" go.sum > go.sum.tmp || true
			mv go.sum.tmp go.sum
			[ -s go.sum ] || rm go.sum
		fi
	)
done
