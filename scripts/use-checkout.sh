#!/usr/bin/env bash
# Usage: /path/to/redis-primitives/scripts/use-checkout.sh [/path/to/your/module]
#
# Try the modules before they are tagged: points your own Go module (the
# current directory by default) at this checkout. It writes a go.work beside
# your go.mod that `use`s your module and every library module of this
# checkout, and `replace`s the sibling versions those modules require
# (v0.1.0, not yet on any proxy) with their directories here. After it,
# `go build`, `go test` and `go run` in your module import
# github.com/redis-primitives/go/lock, …/ratelimit and the others from this
# checkout. Your go.mod is not changed.
#
# Running it again is harmless (it refreshes the same lines). `go mod tidy`
# ignores go.work, so until the first tag do not run it on a module that
# imports these packages. Once the modules are tagged:
#   rm go.work go.work.sum && go get github.com/redis-primitives/go/lock@v0.1.0
# Do not commit the go.work: its paths are this machine's.
set -euo pipefail
checkout=$(cd "$(dirname "$0")/.." && pwd)
target=$(cd "${1:-.}" && pwd)

if [ ! -f "$target/go.mod" ]; then
	echo "use-checkout: $target has no go.mod (run 'go mod init' there first)" >&2
	exit 1
fi
case "$target/" in "$checkout"/*)
	echo "use-checkout: $target is inside the checkout; point a module outside it" >&2
	exit 1
	;;
esac

prefix=github.com/redis-primitives/go
libs=$("$checkout/scripts/modules.sh" published)
# Every sibling version the checkout's go.work maps to a directory: the
# library modules and the fixture their go.mod files require for tests.
replaces=$(sed -nE "s|^\s*($prefix/\S+) (v\S+) => \./(\S+)\s*$|\1 \2 \3|p" "$checkout/go.work")

cd "$target"
# The go line goes to the newest of yours and the checkout's modules, which
# the go command requires of a workspace.
gover=$(
	{
		go mod edit -json | sed -n 's/^\t"Go": "\(.*\)",*$/\1/p'
		for d in $libs; do go mod edit -json "$checkout/$d/go.mod" | sed -n 's/^\t"Go": "\(.*\)",*$/\1/p'; done
	} | sort -V | tail -1
)
[ -f go.work ] || go work init .
go work edit -go="$gover"
go work edit -use=.
for d in $libs; do go work edit -use="$checkout/$d"; done
while read -r path version dir; do
	go work edit -replace="$path@$version=$checkout/$dir"
done <<<"$replaces"

echo "use-checkout: $target/go.work now uses this checkout ($checkout):"
for d in $libs; do echo "  $prefix/$d"; done
echo "Import them and run go build / go test as usual. Do not commit go.work or go.work.sum."
