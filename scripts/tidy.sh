#!/usr/bin/env bash
# `go mod tidy` ignores go.work, so on its own it cannot resolve the sibling
# modules at their unreleased v0.1.0. This runs it per module against the
# working tree published into a local proxy (scripts/localproxy.go), then
# drops the go.sum lines of this repository's own modules: those hashes are
# of the local snapshot, not of a release.
#
# The snapshot is read through a module cache of this run's own, so it never
# lands in the shared one (where a later run, or a run from another checkout
# at the same time, would read it back as v0.1.0); other modules come from
# the shared cache's downloads first, then from the proxy.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
shared=$(go env GOMODCACHE)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
go run scripts/localproxy.go -out "$tmp/proxy" -version v0.1.0
prefix=github.com/redis-primitives/go
for dir in ${@:-$(scripts/modules.sh)}; do
	echo "== $dir"
	(
		cd "$dir"
		GOWORK=off GOFLAGS=-mod=mod GONOSUMDB=$prefix GONOSUMCHECK=1 GOMODCACHE="$tmp/cache" \
			GOPROXY="file://$tmp/proxy,file://$shared/cache/download,${GOPROXY:-https://proxy.golang.org}" go mod tidy
		if [ -f go.sum ]; then
			grep -v "^$prefix/" go.sum > go.sum.tmp || true
			mv go.sum.tmp go.sum
			[ -s go.sum ] || rm go.sum
		fi
	)
done
