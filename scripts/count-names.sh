#!/usr/bin/env bash
# Counts the exported names of every published package (the packages of the
# modules scripts/modules.sh lists as published, internal packages left
# out), as `go doc -all` prints them, and the total.
#
# Counted, one each: a type, a function, a method (of an exported type), a
# constant, a variable (each name of a const or var block). Not counted: the
# fields of exported structs and the methods of exported interfaces, which
# belong to their type.
#
#   scripts/count-names.sh            per package and the total
#   scripts/count-names.sh --names    every counted name, package by package
set -euo pipefail
cd "$(dirname "$0")/.."

names=false
if [ "${1:-}" = --names ]; then names=true; fi

# names reads `go doc -all` and prints one counted declaration a line.
extract() {
	awk '
	/^(const|var) \(/ { blk = "cv"; next }
	/^type [A-Z][A-Za-z0-9_]* (struct|interface) \{$/ { print "type " $2; blk = "skip"; next }
	/^type [A-Z]/ { print "type " $2; next }
	/^[)}]/ { blk = ""; next }
	/^func \(/ { s = $0; sub(/^func \([^)]*\) /, "", s); sub(/\(.*/, "", s); r = $0; sub(/^func \([a-z_]* ?\*?/, "", r); sub(/\).*/, "", r); print "method " r "." s; next }
	/^func [A-Z]/ { s = $2; sub(/[\[(].*/, "", s); print "func " s; next }
	/^(const|var) [A-Z]/ { print $1 " " $2; next }
	blk == "cv" && /^\t[A-Z][A-Za-z0-9_]*/ {
		s = $0; sub(/^\t/, "", s); sub(/[ =].*/, "", s)
		n = split(s, a, ",")
		for (i = 1; i <= n; i++) print "name " a[i]
		next
	}'
}

total=0
for mod in $(scripts/modules.sh published); do
	for pkg in $(cd "$mod" && go list ./... | grep -v '/internal/'); do
		list=$(cd "$mod" && go doc -all "$pkg" | extract)
		n=$(printf '%s' "$list" | grep -c . || true)
		total=$((total + n))
		short=${pkg#github.com/redis-primitives/go/}
		if $names; then
			printf '%s\n' "$list" | sed "s|^|$short |"
		else
			printf '%-24s %4d\n' "$short" "$n"
		fi
	done
done
$names || printf '%-24s %4d\n' total "$total"
