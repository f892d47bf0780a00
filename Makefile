# The two commands a newcomer needs are `make demo` and `make test`.
# Each module of the workspace is tested in its own directory, because
# `go test ./...` at the root of a workspace with no root module fails.

STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: test lint demo servers check-modules

test: servers
	scripts/test.sh

lint: check-modules
	scripts/lint.sh

demo:
	@echo "make demo: the demo arrives with the demo issue; 'make test' runs every failure reproduction today."

# Installs redis-server and PostgreSQL when they are missing and it can
# (root or sudo, with apt-get); otherwise says exactly what to install.
servers:
	scripts/ensure-servers.sh

check-modules:
	scripts/check-modules.sh
