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
if [ ${#failed[@]} -gt 0 ]; then
	echo "FAIL: ${failed[*]}"
	exit 1
fi
echo "all modules passed"
