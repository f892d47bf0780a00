#!/usr/bin/env bash
# Runs every module's tests with the race detector, several modules at once,
# and fails if any module fails. Extra arguments go to `go test`.
#
# Each primitive's suite runs once, on go-redis. The tests whose outcome
# depends on the client (the contract's conformance suite, killed
# connections, frozen servers, Clusters, wake-ups, failovers) are in
# internal/clienttest, which runs each of them once per client (go-redis,
# rueidis, valkey-go), unbatched and batched where batching matters.
#
# The tests wait on servers far more than they compute, so modules run
# TEST_JOBS at a time (default 2: with 3 on two cores, timing tests failed
# under the load); the slowest start first. Each module's
# `go test -json` goes to TEST_RESULTS (default test-results/), and
# scripts/slowest-tests.sh lists the slowest tests of the last run from it.
# QUICK=1 (make test-quick) adds -short, which skips the long fault tests:
# those that start a Sentinel or a Cluster (internal/redistest).
set -uo pipefail
cd "$(dirname "$0")/.."
[ "${QUICK:-}" = 1 ] && set -- -short "$@"
jobs=${TEST_JOBS:-2}
results=$(realpath -m "${TEST_RESULTS:-test-results}")
rm -rf "$results"
mkdir -p "$results"
start=$(date +%s)

# The modules, slowest first (figures of a run on 2 cores): a slow module
# started last would hold the run open alone.
slow="internal/clienttest fence/pgfence lock fence ratelimit bench election robustness examples semaphore telemetry"
all=$(scripts/modules.sh)
order=()
for d in $slow; do echo "$all" | grep -qx "$d" && order+=("$d"); done
for d in $all; do case " $slow " in *" $d "*) ;; *) order+=("$d") ;; esac; done

# run DIR: the module's tests, its JSON kept, one line of outcome printed.
run() {
	local dir=$1 log t0 rc
	log="$results/$(echo "$dir" | tr / _).json"
	t0=$(date +%s)
	(cd "$dir" && go test -race -count=1 -json "${@:2}" ./... >"$log" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "ok    $dir ($(($(date +%s) - t0)) s)"
	else
		echo "FAIL  $dir ($(($(date +%s) - t0)) s), from $log:"
		go run scripts/testlog.go "$log" | sed 's/^/      /'
		echo "$dir" >>"$results/failed"
	fi
}
export -f run
export results

# Compile every module's tests first (-exec true runs none of them): with a
# cold build cache, one module compiled while another's timing tests ran,
# and they failed under the load. A module that does not compile fails below.
# One go command for all modules (the workspace's), which spreads the work
# over the cores.
go test -race -exec true "$@" $(printf './%s/... ' "${order[@]}") >/dev/null 2>&1
printf 'compiled in %d s\n' $(($(date +%s) - start))

printf '%s\n' "${order[@]}" | xargs -P "$jobs" -I{} bash -c 'run "$@"' _ {} "$@"

elapsed=$(($(date +%s) - start))
printf 'wall time: %d min %02d s (%d modules, %d at a time)\n' $((elapsed / 60)) $((elapsed % 60)) ${#order[@]} "$jobs"
echo "the slowest tests: scripts/slowest-tests.sh"
if [ -s "$results/failed" ]; then
	echo "FAIL: $(tr '\n' ' ' <"$results/failed")"
	exit 1
fi
echo "all modules passed"
