#!/usr/bin/env bash
# Usage: scripts/release-check.sh MODULE_DIR VERSION
# Refuses a release of MODULE_DIR at VERSION when its go.mod requires a
# sibling version that has not been tagged yet, or when the tag exists
# already (docs/decisions/0004-multi-module-releases.md). It tags nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?module directory}; version=${2:?version, e.g. v0.1.0}
prefix=github.com/redis-primitives/go
status=0
if git rev-parse -q --verify "refs/tags/$dir/$version" >/dev/null; then
	echo "$dir/$version is tagged already"; status=1
fi
while read -r path v; do
	sib=${path#$prefix/}
	if ! git rev-parse -q --verify "refs/tags/$sib/$v" >/dev/null; then
		echo "$dir requires $path $v, which is not tagged ($sib/$v): release it first"; status=1
	fi
done < <(grep -E "^\s*(require\s+)?$prefix/\S+ v\S+" "$dir/go.mod" | sed -E 's/^\s*(require\s+)?//' | awk '{print $1, $2}')
[ $status -eq 0 ] && echo "$dir $version may be tagged as $dir/$version"
exit $status
