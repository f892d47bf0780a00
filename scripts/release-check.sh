#!/usr/bin/env bash
# Whether a library module may be released, and as what.
#
#   scripts/release-check.sh DIR VERSION [DIR VERSION...]
#       Before tagging DIR/VERSION: refuses when the tag exists already, when
#       DIR's go.mod requires a sibling version that has not been tagged
#       (docs/decisions/0004-multi-module-releases.md), or when the API check
#       against DIR's last tag (below) fails or allows no VERSION that low.
#       Several pairs are modules to be tagged together, at one commit: a
#       requirement on one of them at the version it is to be tagged as
#       counts as released (modules that require each other can have their
#       first tags only so). It tags nothing.
#   scripts/release-check.sh --base REF [DIR...]
#       The API check of each DIR against REF (a commit, a branch, a tag);
#       with no DIR, of every library module with a change since REF. CI
#       runs it for the modules a change touches.
#
# The API check diffs the module's exported API at the base against the
# working tree with apidiff (golang.org/x/exp/cmd/apidiff, run with
# `go run …@version`, so that no go.mod requires it), prints the changes
# and the next version they allow after DIR's last tag (README,
# "What v0 promises": before v1 an incompatible change takes a minor
# release, an addition a minor, anything else a patch), and fails when
# the change is one users see (an API change, or a Lua script of the
# module changed) and DIR/CHANGELOG.md gained no line since the base.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=github.com/redis-primitives/go
apidiff=golang.org/x/exp/cmd/apidiff@v0.0.0-20261113113407-e3970619a1a4

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

# lasttag DIR: DIR's newest release tag (DIR/vX.Y.Z), or nothing.
lasttag() { git tag --list "$1/v*" | sed "s|^$1/||" | grep -E '^v[0-9]+\.[0-9]+\.[0-9]+$' | sort -V | tail -1 || true; }

# nested DIR: the pathspecs that leave out the modules inside DIR.
nested() {
	local d
	for d in $(scripts/modules.sh); do
		[[ $d == "$1"/* ]] && echo ":(exclude)$d"
	done
	return 0
}

# next LAST KIND: the lowest version KIND (incompatible, compatible, none)
# allows after LAST (empty: no release yet).
next() {
	local last=$1 kind=$2 major minor patch
	if [ -z "$last" ]; then echo v0.1.0; return; fi
	IFS=. read -r major minor patch <<<"${last#v}"
	case $kind in
	incompatible)
		if [ "$major" -eq 0 ]; then echo "v0.$((minor + 1)).0"; else echo "v$((major + 1)).0.0 (a new major version: the module path gains /v$((major + 1)))"; fi ;;
	compatible) echo "v$major.$((minor + 1)).0" ;;
	*) echo "v$major.$minor.$((patch + 1))" ;;
	esac
}

# checkout REF: a tree of REF of this repository, made once per REF.
checkout() {
	local out="$tmp/tree-$(git rev-parse --short "$1^{commit}")"
	if [ ! -d "$out" ]; then
		mkdir -p "$out"
		git archive "$1" | tar -x -C "$out"
	fi
	echo "$out"
}

# api TREE DIR FILE: writes DIR's exported API in TREE to FILE.
api() {
	(cd "$1/$2" && go run "$apidiff" -m -w "$3" "$prefix/$2")
}

# check DIR BASE: the API check. It sets kind (incompatible, compatible,
# none) and fails when a change users see has no CHANGELOG line.
check() {
	local dir=$1 base=$2 old report visible=() last
	kind=none
	old=$(checkout "$base")
	mapfile -t excl < <(nested "$dir")
	if [ ! -f "$old/$dir/go.mod" ]; then
		report="a new module: all of its API is new"
		kind=compatible
	else
		api "$old" "$dir" "$tmp/old.api"
		api . "$dir" "$tmp/new.api"
		report=$(cd "$dir" && go run "$apidiff" -m "$tmp/old.api" "$tmp/new.api")
		if grep -q '^Incompatible changes:' <<<"$report"; then
			kind=incompatible
		elif grep -q '^Compatible changes:' <<<"$report"; then
			kind=compatible
		fi
	fi
	[ "$kind" != none ] && visible+=("its exported API")
	if [ -n "$(git diff --name-only "$base" -- "$dir/*.lua" "${excl[@]}")" ]; then
		visible+=("its Lua scripts")
	fi
	last=$(lasttag "$dir")
	echo "== $dir against $base"
	if [ -n "$report" ]; then sed 's/^/   /' <<<"$report"; else echo "   no change to the exported API"; fi
	echo "   last release: ${last:-none}; the next version this allows: $(next "$last" "$kind")"
	if [ ${#visible[@]} -gt 0 ] && ! git diff "$base" -- "$dir/CHANGELOG.md" | grep -qE '^\+[^+]'; then
		echo "   FAIL: ${visible[*]} changed, and $dir/CHANGELOG.md has no new line under [Unreleased]"
		return 1
	fi
	return 0
}

status=0
if [ "${1:-}" = --base ]; then
	base=${2:?--base REF}
	shift 2
	git rev-parse -q --verify "$base^{commit}" >/dev/null || { echo "release-check: no commit $base"; exit 2; }
	dirs=("$@")
	if [ ${#dirs[@]} -eq 0 ]; then
		for d in $(scripts/modules.sh shipped); do
			mapfile -t excl < <(nested "$d")
			[ -n "$(git diff --name-only "$base" -- "$d" "${excl[@]}")" ] && dirs+=("$d")
		done
		[ ${#dirs[@]} -gt 0 ] || echo "release-check: no library module changed since $base"
	fi
	for d in ${dirs[@]+"${dirs[@]}"}; do
		check "$d" "$base" || status=1
	done
	exit $status
fi

# release DIR VERSION: whether DIR may be tagged DIR/VERSION, with the
# modules in together tagged at the same commit.
release() {
	local dir=$1 version=$2 status=0 path v sib last want
	if git rev-parse -q --verify "refs/tags/$dir/$version" >/dev/null; then
		echo "$dir/$version is tagged already"; status=1
	fi
	while read -r path v; do
		sib=${path#$prefix/}
		if [ "${together[$sib]:-}" = "$v" ]; then
			continue
		fi
		if ! git rev-parse -q --verify "refs/tags/$sib/$v" >/dev/null; then
			echo "$dir requires $path $v, which is not tagged ($sib/$v): release it first, or check them to be tagged together (scripts/release-check.sh $dir $version $sib $v …)"; status=1
		fi
	done < <(grep -E "^\s*(require\s+)?$prefix/\S+ v\S+" "$dir/go.mod" | sed -E 's/^\s*(require\s+)?//' | awk '{print $1, $2}')
	last=$(lasttag "$dir")
	if [ -n "$last" ]; then
		check "$dir" "$dir/$last" || status=1
		want=$(next "$last" "$kind" | awk '{print $1}')
		if [ "$(printf '%s\n%s\n' "$want" "$version" | sort -V | head -1)" != "$want" ]; then
			echo "$dir $version is below $want, the lowest version its changes since $last allow"; status=1
		fi
	else
		echo "== $dir: no release yet, so no API to compare against"
	fi
	[ $status -eq 0 ] && echo "$dir $version may be tagged as $dir/$version"
	return $status
}

if [ $# -lt 2 ] || [ $(($# % 2)) -ne 0 ]; then
	echo "usage: scripts/release-check.sh DIR VERSION [DIR VERSION...] | --base REF [DIR...]"; exit 2
fi
declare -A together
pairs=("$@")
for ((i = 0; i < ${#pairs[@]}; i += 2)); do
	together[${pairs[i]}]=${pairs[i + 1]}
done
for ((i = 0; i < ${#pairs[@]}; i += 2)); do
	release "${pairs[i]}" "${pairs[i + 1]}" || status=1
done
if [ $status -eq 0 ] && [ ${#pairs[@]} -gt 2 ]; then
	echo "these may be tagged together, at one commit"
fi
exit $status
