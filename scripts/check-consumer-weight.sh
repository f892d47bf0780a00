#!/usr/bin/env bash
# What a user's `go mod tidy` costs: for each client, a scratch module outside
# the workspace that imports the client alone, and one that imports the
# client, its adapter and every primitive (lock, fence, ratelimit, semaphore,
# election), each tidied into an empty module cache against the working tree
# published into a local proxy (scripts/localproxy.go). go mod tidy loads the
# tests of every package the consumer imports, so whatever the primitives'
# tests import lands in the user's go.sum and cache. It prints the go.sum
# lines (this project's own modules apart) and the module cache's size of
# each, and fails when the primitives make the cache more than 1.3 times the
# client's alone, or add more than 1.3 times the client's go.sum lines of
# other projects' modules (go-redis).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
go run scripts/localproxy.go -out "$tmp/proxy" -version v0.1.0
prefix=github.com/redis-primitives/go
shared=$(go env GOMODCACHE)

# tidy NAME IMPORT...: prints "theirs ours bytes" of a tidy consumer.
tidy() {
	local name=$1; shift
	local work="$tmp/$name" cache="$tmp/cache-$name"
	mkdir -p "$work"
	{
		echo "package main"; echo; echo "import ("
		for p in "$@"; do echo "	_ \"$p\""; done
		echo ")"; echo; echo "func main() {}"
	} > "$work/main.go"
	(
		cd "$work"
		# A build cache of its own: the shared one remembers a package's
		# imports by module version, and every snapshot here is v0.1.0.
		export GOWORK=off GOMODCACHE="$cache" GOCACHE="$tmp/gocache-$name" GOFLAGS=-modcacherw \
			GOPROXY="file://$tmp/proxy,file://$shared/cache/download,${GOPROXY:-https://proxy.golang.org}" \
			GONOSUMDB=$prefix GONOSUMCHECK=1
		go mod init example.com/consumer >/dev/null 2>&1
		go mod tidy >/dev/null 2>&1 || { echo "$name: go mod tidy failed" >&2; go mod tidy; exit 1; }
		theirs=$(grep -vc "^$prefix/" go.sum || true)
		ours=$(grep -c "^$prefix/" go.sum || true)
		# The downloads (zips and go.mod files) plus what they unpack to,
		# less this project's own snapshot.
		bytes=$(du -sb "$cache" | cut -f1)
		own=0
		for d in "$cache/$prefix" "$cache/cache/download/$prefix"; do
			[ -d "$d" ] && own=$((own + $(du -sb "$d" | cut -f1)))
		done
		echo "$theirs $ours $((bytes - own))"
	)
}

status=0
for client in go-redis rueidis valkey-go; do
	case $client in
	go-redis) pkg=github.com/redis/go-redis/v9 adapter=goredisadapter ;;
	rueidis) pkg=github.com/redis/rueidis adapter=rueidisadapter ;;
	valkey-go) pkg=github.com/valkey-io/valkey-go adapter=valkeyadapter ;;
	esac
	read -r t0 _ b0 < <(tidy "$client" "$pkg")
	read -r t1 o1 b1 < <(tidy "$client-all" "$pkg" "$prefix/$adapter" "$prefix/lock" "$prefix/fence" \
		"$prefix/ratelimit" "$prefix/semaphore" "$prefix/election")
	ratio_bytes=$(awk -v a="$b1" -v b="$b0" 'BEGIN {printf "%.2f", a/b}')
	ratio_lines=$(awk -v a="$t1" -v b="$t0" 'BEGIN {printf "%.2f", a/b}')
	echo "$client alone: go.sum $t0 lines, module cache $((b0 / 1000000)) MB; with its adapter and every primitive: go.sum $t1 lines of other projects' modules (${ratio_lines}x) + $o1 of this one's, module cache $((b1 / 1000000)) MB (${ratio_bytes}x)"
	if awk -v r="$ratio_bytes" 'BEGIN {exit !(r > 1.3)}'; then
		echo "$client: the primitives' tests make a tidy consumer's module cache ${ratio_bytes}x the client's alone (target 1.3x)"; status=1
	fi
	if [ "$client" = go-redis ] && awk -v r="$ratio_lines" 'BEGIN {exit !(r > 1.3)}'; then
		echo "$client: the primitives' tests add other projects' modules to a tidy consumer's go.sum: ${ratio_lines}x the client's alone (target 1.3x)"; status=1
	fi
done
exit $status
