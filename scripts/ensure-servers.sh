#!/usr/bin/env bash
# The tests start their own redis-server and PostgreSQL (never the machine's
# 6379 or 5432), so they need the binaries, not running services. This
# installs them with apt-get when they are missing and it can; otherwise it
# says exactly what to install. REDIS_ADDR and PGFENCE_DSN stand in for a
# missing binary. With the argument "redis" it checks Redis alone (the demo
# needs nothing else); with "valgrind", Redis and valgrind (make
# bench-server-cost).
set -euo pipefail
only=${1:-all}

have_redis() { [ -n "${REDIS_ADDR:-}" ] || command -v redis-server >/dev/null; }
have_postgres() {
	[ -n "${PGFENCE_DSN:-}" ] && return 0
	command -v initdb >/dev/null && command -v postgres >/dev/null && return 0
	ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1
}

missing=()
have_redis || missing+=(redis-server)
[ "$only" != all ] || have_postgres || missing+=(postgresql)
[ "$only" != valgrind ] || command -v valgrind >/dev/null || missing+=(valgrind)
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo="sudo -n"; fi
fi
if command -v apt-get >/dev/null && { [ "$(id -u)" -eq 0 ] || [ -n "$sudo" ]; }; then
	echo "installing ${missing[*]} with apt-get"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
	# Debian starts the services it installs; the tests start their own and
	# leave those alone.
	exit 0
fi

cat >&2 <<MSG
These binaries are needed and missing: ${missing[*]}
  Debian/Ubuntu: sudo apt-get install ${missing[*]}
  macOS:         brew install ${missing[*]/redis-server/redis}
Or point the tests at running servers:
  REDIS_ADDR=host:port                    (a Redis the tests may write prefixed keys to)
  PGFENCE_DSN=postgres://user@host/db     (a role that may create databases)
MSG
exit 1
