#!/usr/bin/env bash
# The one list of this repository's modules is go.work; everything that needs
# a list of modules (Makefile, CI, .ci/run, the other scripts) asks this
# script. Adding a library module is one edit: its `use` line in go.work.
#
#   scripts/modules.sh [--json]                 every module in go.work
#   scripts/modules.sh [--json] published       the library modules users `go get`
#   scripts/modules.sh [--json] shipped         what a user's build downloads:
#                                               published and the internal
#                                               modules they run on
#   scripts/modules.sh [--json] affected FILE…  modules whose tests a change to
#                                               FILEs can break (FILEs from
#                                               stdin when none are given)
#
# Directories are relative to the repository root, one a line (or a JSON
# array with --json, for a GitHub Actions matrix).
#
# published: every module except the internal ones (internal/…: the script
# runner, which the library modules run on and no user can import, and the
# fixture, tagged only because the library modules' go.mod files require it
# for their tests) and the modules below, which are programs, demos and the
# robustness harness (make verify), not for import. A new module of
# that kind goes here too; one left out is taken for a library module, and
# `make lint` (scripts/check-modules.sh) then asks for its LICENSE and
# CHANGELOG.md.
unpublished="bench examples experiments robustness"
# shipped: published and the internal modules other than these, which are for
# tests only. Those are released, floor-tested and API-checked like the
# published ones. (The fixture is tagged, since the library modules' go.mod
# files require it for their tests; internal/clienttest, which requires
# every adapter, is required by none and never tagged.)
testonly="internal/redistest internal/clienttest"
#
# affected: the module that holds each file, and every module that requires it
# directly or through others (read from the go.mod files). A file outside every
# module (go.work, Makefile, scripts/, .ci/, .github/) affects every module;
# documentation outside the modules (*.md, docs/, LICENSE) affects none.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

json=false
if [ "${1:-}" = --json ]; then json=true; shift; fi
mode=${1:-all}; [ $# -gt 0 ] && shift

# path dir, for every module of the workspace (go.work's `use` lines).
# GOTOOLCHAIN=local: listing needs no particular Go, so a go line newer than
# the installed Go does not start a toolchain download here.
list=$(GOTOOLCHAIN=local GOWORK="$root/go.work" go list -m -f '{{.Path}} {{.Dir}}' |
	sed "s| $root/| |; s| $root\$| .|" | sort -k2)
all=$(echo "$list" | awk '{print $2}')

emit() {
	if $json; then
		if [ -z "$1" ]; then echo '[]'; else
			echo "$1" | sed 's/.*/"&"/' | paste -sd, | sed 's/^/[/; s/$/]/'
		fi
	else
		[ -z "$1" ] || echo "$1"
	fi
}

# requires DIR: the directories of the workspace modules DIR's go.mod requires.
requires() {
	local dir=$1 path d
	while read -r path d; do
		[ "$d" = "$dir" ] && continue
		if grep -qE "^\s*(require\s+)?$path\s+v" "$dir/go.mod"; then echo "$d"; fi
	done <<<"$list"
}

case $mode in
all)
	emit "$all"
	;;
published)
	out=()
	for d in $all; do
		case " $unpublished " in *" $d "*) continue ;; esac
		case $d in internal/* | */internal/* | .) continue ;; esac
		out+=("$d")
	done
	emit "$(printf '%s\n' ${out[@]+"${out[@]}"})"
	;;
shipped)
	out=()
	for d in $all; do
		case " $unpublished $testonly " in *" $d "*) continue ;; esac
		case $d in */internal/* | .) continue ;; esac
		out+=("$d")
	done
	emit "$(printf '%s\n' ${out[@]+"${out[@]}"})"
	;;
affected)
	if [ $# -eq 0 ]; then mapfile -t files; else files=("$@"); fi
	declare -A hit=()
	for f in ${files[@]+"${files[@]}"}; do
		[ -n "$f" ] || continue
		owner=""
		for d in $all; do # longest directory that holds f: fence/pgfence before fence
			if [[ $f == "$d"/* ]] && [ ${#d} -gt ${#owner} ]; then owner=$d; fi
		done
		if [ -n "$owner" ]; then hit[$owner]=1; continue; fi
		case $f in
		*.md | docs/* | LICENSE | .gitignore) ;;
		*) emit "$all"; exit 0 ;;
		esac
	done
	# Dependents, to a fixed point.
	declare -A deps=()
	for d in $all; do deps[$d]=$(requires "$d" | tr '\n' ' '); done
	changed=true
	while $changed; do
		changed=false
		for d in $all; do
			[ -n "${hit[$d]:-}" ] && continue
			for r in ${deps[$d]}; do
				if [ -n "${hit[$r]:-}" ]; then hit[$d]=1; changed=true; break; fi
			done
		done
	done
	hits=""
	for d in $all; do [ -n "${hit[$d]:-}" ] && hits+="$d"$'\n'; done
	emit "${hits%$'\n'}"
	;;
*)
	echo "usage: scripts/modules.sh [--json] [all | published | shipped | affected FILE...]" >&2
	exit 2
	;;
esac
