#!/usr/bin/env bash
# Runs every module's tests with the race detector, one module after the
# other, and fails if any module fails. Extra arguments go to `go test`.
# QUICK=1 (make test-quick) adds -short, which skips the long fault tests:
# those that start a Sentinel or a Cluster (internal/redistest).
set -uo pipefail
cd "$(dirname "$0")/.."
[ "${QUICK:-}" = 1 ] && set -- -short "$@"
failed=()
for dir in $(scripts/modules.sh); do
	echo "== $dir"
	if ! (cd "$dir" && go test -race -count=1 "$@" ./...); then
		failed+=("$dir")
	fi
done
# The batched pass: lock and fence once more with every Locker and Store
# batched (REDISTEST_BATCH, read by their tests), so that each of their
# guarantees is also tested through the batcher.
for dir in lock fence; do
	echo "== $dir, batched"
	if ! (cd "$dir" && REDISTEST_BATCH=16 go test -race -count=1 "$@" ./...); then
		failed+=("$dir (batched)")
	fi
done
# The adapter passes: the primitives' suites once more on each other
# client, through its adapter (REDISTEST_CLIENT, read by the fixtures'
# Client methods), so that each guarantee is also tested on rueidis and
# valkey-go with their default options.
for client in rueidis valkey; do
	for dir in lock fence fence/pgfence ratelimit semaphore election; do
		echo "== $dir, on $client"
		if ! (cd "$dir" && REDISTEST_CLIENT=$client go test -race -count=1 "$@" ./...); then
			failed+=("$dir (on $client)")
		fi
	done
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "FAIL: ${failed[*]}"
	exit 1
fi
echo "all modules passed"
