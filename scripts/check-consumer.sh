#!/usr/bin/env bash
# Proves what a user downloads: for each library module, a scratch module
# outside the workspace runs `go get MODULE@v0.1.0` against the working tree
# published into a local proxy (scripts/localproxy.go), with an empty module
# cache, then builds. It fails if the module's zip holds no LICENSE, or if
# anything test-only (the fixture module, testcontainers, Docker's client,
# goleak), another module's database driver, or a Redis client other than
# the one of the module's own adapter (a primitive downloads none) lands in
# the cache. Nothing is fetched from any proxy for this
# repository's own modules. With no MODULE it checks every library module
# (scripts/modules.sh published).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck disable=SC2046 # one module directory a word
[ $# -gt 0 ] || set -- $(scripts/modules.sh published)
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
go run scripts/localproxy.go -out "$tmp/proxy" -version v0.1.0

prefix=github.com/redis-primitives/go
status=0
for mod in "$@"; do
	work="$tmp/consumer-${mod//\//-}"; cache="$tmp/cache-${mod//\//-}"
	mkdir -p "$work"
	pkg="$prefix/$mod"
	cat > "$work/main.go" <<GO
package main

import _ "$pkg"

func main() {}
GO
	(
		cd "$work"
		export GOWORK=off GOMODCACHE="$cache" GOFLAGS=-modcacherw \
			GOPROXY="file://$tmp/proxy,${GOPROXY:-https://proxy.golang.org}" \
			GONOSUMDB=$prefix GONOSUMCHECK=1
		go mod init example.com/consumer >/dev/null 2>&1
		go get "$pkg@v0.1.0" >/dev/null 2>&1 || { echo "$mod: go get failed"; go get "$pkg@v0.1.0"; exit 1; }
		go build ./...
	) || { status=1; continue; }
	zip="$cache/cache/download/$pkg/@v/v0.1.0.zip"
	files=$(unzip -Z1 "$zip")
	if ! grep -qx "$pkg@v0.1.0/LICENSE" <<<"$files"; then
		echo "$mod: the module zip a user downloads holds no LICENSE"; status=1
	fi
	downloaded=$(cd "$cache/cache/download" && find . -name '*.zip' -o -name '*.mod' | sed 's|^\./||; s|/@v/| |' | sort -u)
	forbidden='testcontainers|docker|moby|goleak|internal/redistest|containerd|opencontainers'
	[ "$mod" != "fence/pgfence" ] && forbidden="$forbidden|jackc/pgx"
	# A Redis client only through its own adapter: a primitive downloads none.
	[ "$mod" != goredisadapter ] && forbidden="$forbidden|redis/go-redis"
	[ "$mod" != rueidisadapter ] && forbidden="$forbidden|redis/rueidis"
	[ "$mod" != valkeyadapter ] && forbidden="$forbidden|valkey-io/valkey-go"
	bad=$(echo "$downloaded" | grep -E "$forbidden" || true)
	modules=$(echo "$downloaded" | awk '{print $1}' | sort -u | tr '\n' ' ')
	if [ -n "$bad" ]; then
		echo "$mod: a user would download test-only or unrelated modules:"; echo "$bad"; status=1
	else
		echo "$mod: a user downloads only: $modules"
	fi
done
exit $status
