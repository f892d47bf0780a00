#!/usr/bin/env bash
# Proves the version floors the library modules declare: each module's `go`
# directive is the oldest Go it supports, and its go-redis and pgx
# requirements are the oldest versions it is tested with (issue 16).
#
# In a temporary copy of the working tree, each library module
# (scripts/modules.sh shipped) is vetted and tested in a workspace of its
# own that holds it and the workspace modules it requires (siblings, the
# fixture), with the Go its go.mod names (GOTOOLCHAIN=goX.Y.Z, which the go
# command takes from the module proxy) and exactly the go-redis and pgx
# versions its go.mod requires. The repository's go.work is not used: the
# examples and bench modules in it require newer versions, which minimal
# version selection would pick for every module of the workspace.
#
# It fails when a module the library module requires raises its go-redis or
# pgx above what it declares (then that floor would not be what is tested),
# or when vet or a test fails.
#
#   scripts/test-floors.sh [MODULE_DIR...]   (default: every library module)
#
# FLOORS_GOTOOLCHAIN=local keeps the floor versions of go-redis and pgx but
# the installed Go, to tell a Go floor's failure from a dependency's. No -race: `make test` runs the race detector
# with the newest Go; this proves the floors build and behave.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck disable=SC2206 # module directories have no spaces
libs=(${@:-$(scripts/modules.sh shipped)})
gomod() { GOTOOLCHAIN=local go mod edit -json "$1/go.mod"; }
goline() { gomod "$1" | sed -n 's/^\t"Go": "\(.*\)",*$/\1/p'; }
# required DIR MODULE: the version of MODULE that DIR's go.mod requires.
required() {
	gomod "$1" | tr -d '\n\t ' | grep -o "{\"Path\":\"$2\",\"Version\":\"[^\"]*\"" | sed 's/.*"Version":"//; s/"$//' || true
}
# direct DIR: the workspace modules DIR's go.mod requires (go.mod lists
# every module a build of DIR's packages and tests needs, indirect included).
direct() {
	gomod "$1" | sed -n 's/.*"Path": "github.com\/redis-primitives\/go\/\([^"]*\)".*/\1/p' | grep -vx "$1" || true
}
# siblings DIR: direct's modules and theirs in turn. The module graph holds
# the requirements of every module DIR's go.mod names, and a sibling no
# package of DIR's needs (fence's requirement on lock, for a module whose
# tests import only fence) is on no proxy before the first release.
siblings() {
	local todo=("$1") seen=" $1 " m s
	while [ ${#todo[@]} -gt 0 ]; do
		m=${todo[0]}
		todo=("${todo[@]:1}")
		for s in $(direct "$m"); do
			case "$seen" in
			*" $s "*) ;;
			*)
				seen="$seen$s "
				todo+=("$s")
				echo "$s"
				;;
			esac
		done
	done
}

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C "$tmp"

# floor DIR: DIR's vet and tests at its floors, in the workspace written for
# it below; its output goes to $tmp/floor.DIR.log, and DIR to $tmp/failed if
# it fails.
floor() {
	local d=$1 gover work log
	gover=$(goline "$d")
	work="$tmp/go.work.${d//\//-}"
	log="$tmp/floor.${d//\//-}.log"
	(
		echo "== $d: go $gover, with $(grep -E '^\s+\./' "$work" | sed 's|^\s*\./||' | grep -vx "$d" | tr '\n' ' ')"
		cd "$tmp/$d"
		export GOTOOLCHAIN="${FLOORS_GOTOOLCHAIN:-go$gover}" GOWORK="$work" GOFLAGS=-mod=readonly
		for dep in github.com/redis/go-redis/v9 github.com/jackc/pgx/v5; do
			want=$(cd "$tmp" && required "$d" "$dep")
			[ -n "$want" ] || continue
			got=$(go list -m -f '{{.Version}}' "$dep")
			echo "   $dep $got"
			if [ "$want" != "$got" ]; then
				echo "   $d requires $dep $want, but a module it requires raises it to $got:"
				echo "   raise $d's requirement to $got (scripts/tidy.sh $d), or lower that module's"
				exit 1
			fi
		done
		go vet ./... && go test -count=1 ./...
	) >"$log" 2>&1 || echo "$d" >>"$tmp/failed"
	cat "$log"
}

# Each module's workspace: it and the workspace modules it requires.
for d in "${libs[@]}"; do
	gover=$(goline "$d")
	set_=$( { echo "$d"; siblings "$d"; } | sort -u)
	{
		echo "go $gover"
		echo "use ("
		for m in $set_; do echo "	./$m"; done
		echo ")"
		echo "replace ("
		for m in $set_; do grep -E "^\s*github.com/redis-primitives/go/$m v\S+ => \./$m\s*$" go.work || true; done
		echo ")"
	} >"$tmp/go.work.${d//\//-}"
done

# The modules' tests wait on servers far more than they compute: two at
# a time (FLOORS_JOBS, default 2: with 3, election's timing tests failed under the load), each one's output printed whole when it ends.
export -f floor gomod goline required
export tmp
printf '%s\n' "${libs[@]}" | xargs -P "${FLOORS_JOBS:-2}" -I{} bash -c 'floor "$1"' _ {}
failed=()
[ -s "$tmp/failed" ] && mapfile -t failed <"$tmp/failed"
if [ ${#failed[@]} -gt 0 ]; then
	echo "FAIL at the floors: ${failed[*]}"
	exit 1
fi
echo "floors: every library module passed with its declared Go, go-redis and pgx"
