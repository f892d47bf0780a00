#!/usr/bin/env bash
# The slowest tests of the last `make test` (scripts/test.sh keeps each
# module's `go test -json` in TEST_RESULTS, default test-results/), so that
# the next round can see where the suite's time goes.
#
#   scripts/slowest-tests.sh [N]   (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
results=${TEST_RESULTS:-test-results}
if ! ls "$results"/*.json >/dev/null 2>&1; then
	echo "no test logs in $results/: run make test first" >&2
	exit 1
fi
go run scripts/testlog.go -slowest "${1:-20}" "$results"/*.json
