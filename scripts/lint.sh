#!/usr/bin/env bash
# gofmt, go vet and staticcheck on every module.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
unformatted=$(gofmt -l $(git ls-files '*.go'; git ls-files --others --exclude-standard '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; status=1
fi
scripts/gen-valkeyadapter.sh --check || status=1
(cd ratelimit && go run ./internal/luagen -check) || status=1
for dir in $(scripts/modules.sh); do
	echo "== $dir"
	(cd "$dir" && go vet ./...) || status=1
	(cd "$dir" && go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...) || status=1
done

# go.work.sum must be complete: in a fresh clone, `go doc` or `go vet` run
# in the workspace loads go.mod files that no module's go.sum covers, and
# the go command writes their checksums into go.work.sum, so the tree no
# longer matches the commit. A warm module cache hides that (the go.mod
# files are already there), so the commands run here with an empty cache of
# their own, filled from the shared one (file:// proxy, offline) and the
# proxy for anything it lacks; then nothing in the tree may have changed.
state() { git status --porcelain --untracked-files=all; git diff; }
before=$(state | sha256sum)
cache=$(mktemp -d)
proxy="file://$(go env GOMODCACHE)/cache/download,$(go env GOPROXY)"
(
	export GOMODCACHE="$cache" GOFLAGS=-modcacherw GOPROXY="$proxy"
	go vet ./... >/dev/null 2>&1 # the root is no module: this only loads the workspace
	for dir in $(scripts/modules.sh); do
		(cd "$dir" && go doc >/dev/null 2>&1)
	done
)
chmod -R u+w "$cache" && rm -rf "$cache"
if [ "$(state | sha256sum)" != "$before" ]; then
	echo "go doc / go vet in a fresh module cache changed the tree (go.work.sum incomplete?); commit what they wrote:"
	git status --short
	status=1
fi
exit $status
