# The two commands a newcomer needs are `make demo` and `make test`.
# Each module of the workspace is tested in its own directory, because
# `go test ./...` at the root of a workspace with no root module fails.

.PHONY: test test-quick verify slowest-tests release-check lint demo bench bench-server-cost experiment servers check-modules consumer try-checkout test-floors actionlint

# Every module's tests with -race, three modules at a time; prints the wall
# time. The tests that depend on the client run on every client, in
# internal/clienttest (see scripts/test.sh).
test: servers
	scripts/test.sh

# Every primitive's histories recorded under real faults (CLIENT KILL,
# SIGSTOP of the server and of clients, restarts with and without
# persistence, Sentinel failovers, Cluster slot migrations) and checked by
# porcupine, and each naive version caught (robustness/, ADR 0028). About
# 5 minutes plus start-up; VERIFY_DURATION=30m for longer. Prints a summary
# table and writes it to test-results/verify.json; visualizations of
# illegal histories go to a temporary directory it names (VERIFYFLAGS="-vis DIR").
VERIFY_DURATION ?= 5m
verify: servers
	mkdir -p test-results
	cd robustness && go test -count=1 -timeout 0 -v -verify -duration $(VERIFY_DURATION) \
		-summary ../test-results/verify.json $(VERIFYFLAGS) .

# The 20 slowest tests of the last make test (N=50 for more).
N ?= 20
slowest-tests:
	scripts/slowest-tests.sh $(N)

# The inner loop: make test with -short, which skips the long fault tests
# (Sentinel and Cluster failovers). CI runs make test, all of them.
test-quick: servers
	QUICK=1 scripts/test.sh

# The release check (scripts/release-check.sh) on changes made for the
# purpose in a scratch clone, then on every library module changed since
# BASE (default: where this branch left main): API diff, the next version it
# allows, a CHANGELOG line.
BASE ?= $(shell git merge-base main HEAD)
release-check:
	scripts/test-release-check.sh
	scripts/release-check.sh --base $(BASE)

lint: check-modules actionlint
	scripts/lint.sh

# Every failure next to its fix, measured; it starts its own redis-server.
# DEMOFLAGS="-json out.json -svg out.svg" writes the figures and timelines.
demo:
	scripts/ensure-servers.sh redis
	cd examples && go run ./demo $(DEMOFLAGS)

# Measures this project against the libraries users would pick instead, in
# one run against one redis-server it starts itself (see BENCHMARKS.md).
bench: servers
	cd bench && go run ./cmd/bench $(BENCHFLAGS)

# Instructions redis-server executes per operation, ours and the peers',
# counted by callgrind: the server's cost of a script, free of the
# machine's noise (needs valgrind; see BENCHMARKS.md).
bench-server-cost:
	scripts/ensure-servers.sh valgrind
	cd bench && go run ./cmd/servercost $(COSTFLAGS)

# The WATCH/MULTI limiter three ways (docs/decisions/0002-lua-not-watch-multi.md).
experiment: servers
	cd experiments && go run ./watch-multi-race

# Installs redis-server and PostgreSQL when they are missing and it can
# (root or sudo, with apt-get); otherwise says exactly what to install.
servers:
	scripts/ensure-servers.sh

check-modules:
	scripts/check-modules.sh

# The GitHub workflow, checked offline (built from the module proxy).
# govulncheck runs in the workflow only: it needs the online database.
actionlint:
	go run github.com/rhysd/actionlint/cmd/actionlint@v1.7.12 -shellcheck= .github/workflows/*.yml

# Each library module tested with the oldest Go, go-redis and pgx its go.mod
# declares (GOTOOLCHAIN from the module proxy); see scripts/test-floors.sh.
test-floors: servers
	scripts/test-floors.sh

# What a user downloads: each library module fetched from a local proxy of
# this working tree into an empty module cache, outside the repository, and
# built; fails on a missing LICENSE in its zip or test-only downloads. Then
# what a user's go mod tidy of every primitive adds to the client's own
# go.sum and module cache (scripts/check-consumer-weight.sh).
consumer:
	scripts/check-consumer.sh
	scripts/check-consumer-weight.sh

# A module outside the repository imports lock and ratelimit through
# scripts/use-checkout.sh (the try-before-the-tag command) and builds.
try-checkout:
	scripts/check-use-checkout.sh
