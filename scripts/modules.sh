#!/usr/bin/env bash
# Prints the directory of every module in go.work, one a line, relative to
# the repository root.
set -euo pipefail
cd "$(dirname "$0")/.."
go list -m -f '{{.Dir}}' | sed "s|^$(pwd)/||; s|^$(pwd)\$|.|"
