#!/usr/bin/env bash
# Proves scripts/release-check.sh on changes made for the purpose, in a
# scratch clone of this repository (its branches and tags are left alone):
# from a base tagged lock/v0.3.2 that adds an exported name to lock,
#   - a commit that removes the name without a CHANGELOG line fails, naming
#     the removed name, and allows no less than v0.4.0;
#   - the same with a CHANGELOG line passes;
#   - an addition allows v0.4.0, a change to no API v0.3.3;
#   - a change to a Lua script alone, without a CHANGELOG line, fails;
#   - `release-check.sh lock v0.3.3` after the removal is refused;
#   - of modules that require each other, none tagged, each alone is
#     refused and all together may be tagged.
# The release-check.sh tested is the working tree's.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
repo=$tmp/repo
git clone -q --no-local "$here" "$repo" 2>/dev/null || git clone -q "$here" "$repo"
cd "$repo"
git checkout -q --detach "$(git -C "$here" rev-parse HEAD)"
git config user.email release-check@example.invalid
git config user.name release-check
cp "$here/scripts/release-check.sh" scripts/release-check.sh

commit() { git add -A && git commit -qm "$1"; }
failures=0
# expect CODE PATTERN... -- ARGS: release-check.sh ARGS exits CODE and prints
# every PATTERN (extended regular expressions).
expect() {
	local code=$1 got out patterns=()
	shift
	while [ "$1" != -- ]; do patterns+=("$1"); shift; done
	shift
	set +e
	out=$(scripts/release-check.sh "$@" 2>&1)
	got=$?
	set -e
	local ok=true
	[ "$got" -eq "$code" ] || ok=false
	for p in "${patterns[@]}"; do grep -qE -- "$p" <<<"$out" || ok=false; done
	if $ok; then
		echo "ok   release-check.sh $* -> exit $got"
		sed 's/^/     /' <<<"$out"
	else
		echo "FAIL release-check.sh $*: exit $got, want $code and ${patterns[*]}:"
		sed 's/^/     /' <<<"$out"
		failures=$((failures + 1))
	fi
}

cat >lock/zz_releasecheck.go <<'GO'
package lock

// ReleaseCheckProbe exists only in scripts/test-release-check.sh's scratch clone.
func ReleaseCheckProbe() {}
GO
commit "base: lock gains ReleaseCheckProbe"
git tag lock/v0.3.2

git rm -q lock/zz_releasecheck.go
commit "lock: ReleaseCheckProbe removed, no changelog"
expect 1 'Incompatible changes' 'ReleaseCheckProbe: removed' 'next version this allows: v0\.4\.0' 'FAIL: its exported API changed' -- --base lock/v0.3.2 lock
expect 1 'ReleaseCheckProbe: removed' -- --base HEAD~1
expect 1 'below v0\.4\.0' -- lock v0.3.3

sed -i 's/^## \[Unreleased\]$/&\n\n### Removed\n- `ReleaseCheckProbe`./' lock/CHANGELOG.md
commit "lock: the removal, with its changelog line"
expect 0 'ReleaseCheckProbe: removed' 'v0\.4\.0' -- --base lock/v0.3.2 lock

git checkout -q lock/v0.3.2 -- lock
cat >lock/zz_releasecheck2.go <<'GO'
package lock

// ReleaseCheckProbe2 exists only in scripts/test-release-check.sh's scratch clone.
func ReleaseCheckProbe2() {}
GO
sed -i 's/^## \[Unreleased\]$/&\n\n### Added\n- `ReleaseCheckProbe2`./' lock/CHANGELOG.md
commit "lock: an addition, with its changelog line"
expect 0 'Compatible changes' 'ReleaseCheckProbe2: added' 'next version this allows: v0\.4\.0' -- --base lock/v0.3.2 lock

git checkout -q lock/v0.3.2 -- lock
git rm -q lock/zz_releasecheck2.go 2>/dev/null || true
echo '// A comment, no API.' >>lock/zz_releasecheck.go
commit "lock: a comment"
expect 0 'no change to the exported API' 'next version this allows: v0\.3\.3' -- --base lock/v0.3.2 lock

echo '-- a comment' >>lock/release.lua
commit "lock: a Lua script changed, no changelog"
expect 1 'FAIL: its Lua scripts changed' -- --base HEAD~1 lock

# Modules that require each other at versions not yet tagged: the runner's
# tests run on goredisadapter, which runs on the runner, and lock's tests
# too, while goredisadapter's Example builds a lock. Each alone is refused;
# all of them together (with the fixture their tests use) may be tagged.
cycle=(internal/luascripts internal/redistest goredisadapter lock)
together=()
for d in "${cycle[@]}"; do
	git tag -l "$d/v*" | xargs -r git tag -d >/dev/null
	together+=("$d" v0.1.0)
done
expect 1 'requires github.com/redis-primitives/go/internal/redistest v0\.1\.0, which is not tagged' -- internal/luascripts v0.1.0
expect 1 'requires github.com/redis-primitives/go/goredisadapter v0\.1\.0, which is not tagged' -- internal/luascripts v0.1.0 internal/redistest v0.1.0
expect 1 'requires github.com/redis-primitives/go/lock v0\.1\.0, which is not tagged' -- internal/luascripts v0.1.0 internal/redistest v0.1.0 goredisadapter v0.1.0
expect 0 'internal/luascripts v0\.1\.0 may be tagged' 'goredisadapter v0\.1\.0 may be tagged' 'together, at one commit' -- "${together[@]}"
expect 2 'usage' -- lock

if [ $failures -gt 0 ]; then
	echo "test-release-check: $failures failed"
	exit 1
fi
echo "test-release-check: release-check.sh caught each change"
