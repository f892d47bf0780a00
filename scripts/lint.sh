#!/usr/bin/env bash
# gofmt, go vet and staticcheck on every module.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
unformatted=$(gofmt -l $(git ls-files '*.go'; git ls-files --others --exclude-standard '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; status=1
fi
for dir in $(scripts/modules.sh); do
	echo "== $dir"
	(cd "$dir" && go vet ./...) || status=1
	(cd "$dir" && go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...) || status=1
done
exit $status
