#!/usr/bin/env bash
# Keeps the module layout honest (docs/decisions/0004-multi-module-releases.md):
#  - go.work uses every module in the repository;
#  - no go.mod has a replace directive, which users would not get anyway;
#  - no go.mod names the placeholder version v0.0.0-00010101000000-000000000000;
#  - every sibling a go.mod requires is mapped to its directory in go.work;
#  - every shipped module (scripts/modules.sh shipped) has its own LICENSE
#    (a module's zip holds only its own directory, and pkg.go.dev shows no
#    documentation without a license) and a CHANGELOG.md, and the root has a
#    LICENSE.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
prefix=github.com/redis-primitives/go
for mod in $(git ls-files '*go.mod'; git ls-files --others --exclude-standard '*go.mod'); do
	dir=$(dirname "$mod")
	if ! grep -qE "^\s*\./${dir#./}\s*$" go.work && [ "$dir" != "." ]; then
		echo "$mod: module not listed in go.work"; status=1
	fi
	if grep -qE '^\s*replace\b' "$mod"; then
		echo "$mod: replace directive (development mappings belong in go.work)"; status=1
	fi
	if grep -q 'v0.0.0-00010101000000-000000000000' "$mod"; then
		echo "$mod: placeholder version"; status=1
	fi
	for req in $(grep -E "^\s*(require\s+)?$prefix/\S+ v\S+" "$mod" | sed -E 's/^\s*(require\s+)?//' | awk '{print $1 "@" $2}'); do
		path=${req%@*}; version=${req#*@}
		if ! grep -qE "^\s*$path $version => \./${path#$prefix/}\s*$" go.work; then
			echo "$mod: requires $req, which go.work does not map to ./${path#$prefix/}"; status=1
		fi
	done
done
[ -f LICENSE ] || { echo "LICENSE: missing at the repository root"; status=1; }
for dir in $(scripts/modules.sh shipped); do
	[ -f "$dir/LICENSE" ] || { echo "$dir: no LICENSE (copy the root LICENSE: a module's zip holds only its own directory)"; status=1; }
	[ -f "$dir/CHANGELOG.md" ] || { echo "$dir: no CHANGELOG.md (Keep a Changelog form, with a ## [Unreleased] section)"; status=1; }
	if [ -f "$dir/LICENSE" ] && ! cmp -s LICENSE "$dir/LICENSE"; then
		echo "$dir/LICENSE: differs from the root LICENSE"; status=1
	fi
	if [ -f "$dir/CHANGELOG.md" ] && ! grep -q '^## \[Unreleased\]' "$dir/CHANGELOG.md" && ! grep -qE '^## \[[0-9]' "$dir/CHANGELOG.md"; then
		echo "$dir/CHANGELOG.md: no '## [Unreleased]' or '## [X.Y.Z]' section"; status=1
	fi
done
[ $status -eq 0 ] && echo "modules: ok"
exit $status
