# Lectern: `make run` and `make test` are the whole quick start (README.md).
SHELL := /bin/bash
GO    ?= go

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS := -X github.com/lectern-research/lectern/host/internal/buildinfo.version=$(VERSION)

# Every folder plugins/<kind>/<name> holding a main.go is a plugin binary.
PLUGIN_DIRS := $(patsubst %/main.go,%,$(wildcard plugins/*/*/main.go))
# Packages of both modules of the workspace (root and sdk).
PKGS := ./... ./sdk/...

.PHONY: build run test test-qdrant bench bench-http load fuzz fuzz-short lint fmt clean proto pdfjs

## pdfjs: Mozilla's pdf.js for the reader page, from the npm registry at a pinned
## version whose tarball must match the pinned SHA-512 (scripts/vendor-pdfjs), into
## a git-ignored folder the dashboard embeds. Downloads only when that folder lacks
## this version; no node needed. `npm view pdfjs-dist@<v> dist.integrity` gives the
## integrity of another version (docs/decisions.md, "Reader").
PDFJS_VERSION   := 6.5.438
PDFJS_INTEGRITY := sha512-vg8Pw1x+AFKy4AMDvhuWl5cOYV8d698UoEANoFFhc79hqXDnZQqnOXoxw3HG907WHOg1JYOvLhP756boddFxpA==
PDFJS_DIR       := host/internal/web/static/vendor/pdfjs
pdfjs:
	@./scripts/vendor-pdfjs $(PDFJS_VERSION) $(PDFJS_INTEGRITY) $(PDFJS_DIR)

## build: bin/lectern (the host, with pdf.js embedded) and bin/plugins/<name> (each plugin)
build: pdfjs
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/lectern ./host/cmd/lectern
	@mkdir -p bin/plugins
	@for dir in $(PLUGIN_DIRS); do \
		echo "$(GO) build -o bin/plugins/$$(basename $$dir) ./$$dir"; \
		$(GO) build -ldflags "$(LDFLAGS)" -o bin/plugins/$$(basename $$dir) ./$$dir || exit 1; \
	done

## run: build, install what serving needs when missing (poppler-utils, as root:
## scripts/ensure-tools --serve), then serve API and dashboard on http://127.0.0.1:3001
## with the embedded PostgreSQL under .lectern/pg (or DATABASE_URL when set)
run: build
	./scripts/ensure-tools --serve
	@echo "Lectern: API and dashboard at http://localhost:3001 (Ctrl-C stops them)"
	./bin/lectern serve

## test: the whole suite against one throwaway PostgreSQL cluster for the run (installs
## poppler-utils and chromium first when missing and running as root: scripts/ensure-tools;
## the browser tests leave screenshots in test-output/browser)
test: build
	./scripts/ensure-tools
	./bin/lectern devdb exec -- $(GO) test -count=1 $(PKGS)

## test-qdrant: the vector-store contract test against a real Qdrant (QDRANT_URL=http://host:6334)
test-qdrant: build
	@test -n "$(QDRANT_URL)" || { echo "make test-qdrant: set QDRANT_URL to a Qdrant gRPC address, e.g. http://localhost:6334" >&2; exit 2; }
	QDRANT_URL=$(QDRANT_URL) ./bin/lectern devdb exec -- $(GO) test -count=1 -tags qdrant -run TestContract ./host/internal/vectorstore/...

## bench: benchmarks only (figures go to docs/benchmarks.md)
bench: build
	./scripts/ensure-tools
	./bin/lectern devdb exec -- $(GO) test -count=1 -run '^$$' -bench . -benchmem $(PKGS)

## bench-http: the HTTP benchmark (issue 18 item 7; docs/benchmarks.md): serves bin/lectern on
## a private database cached in .lectern/bench-http (seeded on first use: 10k papers, 100k
## passages, 10 users with 1k cards each, the fixture PDFs from LECTERN_FIXTURES, else
## ../shared/fixtures), signs the users in and drives the mixed read set at 50 and 200
## connections. BENCH_HTTP_FLAGS passes flags (e.g. --duration 60s, --reseed). Not in make test.
bench-http: build
	./scripts/ensure-tools --serve
	$(GO) build -o bin/lectern-bench-http ./host/cmd/lectern-bench-http
	./bin/lectern-bench-http --lectern bin/lectern $(BENCH_HTTP_FLAGS)

## fuzz: every Go fuzz target (found by scripts/fuzz: each func FuzzX in a *_test.go),
## one after another for FUZZTIME each (default 30s) with FUZZPARALLEL workers
## (default 2); prints a table row per target for docs/reliability.md. A crasher
## lands in the package's testdata/fuzz/FuzzX/: commit it with the fix.
## FuzzJSONRoutes replays its 449 seeds (every operation of openapi.json, poisoned)
## before it mutates, and Go counts that in -fuzztime: it gets FUZZTIME_JSON_ROUTES
## (default 3m). fuzz-short: the CI slice, FUZZTIME=2s per target, without
## FuzzJSONRoutes (make test already replays its seeds).
FUZZTIME ?= 30s
FUZZTIME_JSON_ROUTES ?= 3m
fuzz:
	FUZZTIME=$(FUZZTIME) FUZZTIME_FuzzJSONRoutes=$(FUZZTIME_JSON_ROUTES) ./scripts/fuzz
fuzz-short:
	FUZZTIME=2s FUZZSKIP='^FuzzJSONRoutes$$' ./scripts/fuzz

## load: the load test with writes (issue 23 item 3; docs/benchmarks.md, "Load test (issue 23)"):
## on bench-http's cached data, 200 virtual users, each signed in with its own session, do one
## action of a mix with writes and think 1-5 s, for 60 s; it prints per route p50/p95/p99 and
## answers by status, then checks that every acknowledged write is in the database. The knee:
## LOAD_FLAGS="--users 50,100,200,400". A profile of the host under load: build it with
## `go build -tags benchpprof -o bin/lectern-pprof ./host/cmd/lectern`, run with
## LECTERN_PPROF_ADDR=127.0.0.1:6061 and --lectern bin/lectern-pprof. Not in make test.
load: build
	./scripts/ensure-tools --serve
	$(GO) build -o bin/lectern-bench-http ./host/cmd/lectern-bench-http
	./bin/lectern-bench-http --lectern bin/lectern --mix load --users 200 --duration 60s $(LOAD_FLAGS)

## lint: go vet, gofmt, golangci-lint (.golangci.yaml: depguard import fences, forbidigo,
## the standard linters) over both modules, then scripts/lint-fences, which plants imports
## that break the fences and expects golangci-lint to refuse them. golangci-lint is
## installed at a pinned version into bin/tools. About 15 s with a warm cache, 4 min cold.
GOLANGCI_LINT_VERSION := v2.15.0
lint:
	$(GO) vet $(PKGS)
	@out=$$(gofmt -l host migrations sdk plugins); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@mkdir -p $(TOOLS)
	@$(TOOLS)/golangci-lint version 2>/dev/null | grep -q ' $(GOLANGCI_LINT_VERSION:v%=%) ' || \
		GOBIN=$(TOOLS) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	$(TOOLS)/golangci-lint run $(PKGS)
	GOLANGCI_LINT=$(TOOLS)/golangci-lint ./scripts/lint-fences

## proto: regenerate sdk/internal/pb from sdk/proto/lectern/plugin/v1 (buf and the Go
## plugins are installed at pinned versions into bin/tools; docs/plugin-authors.md)
BUF_VERSION                := v1.75.0
PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
TOOLS := $(CURDIR)/bin/tools
proto:
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) $(GO) install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
	GOBIN=$(TOOLS) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN=$(TOOLS) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	cd sdk && PATH="$(TOOLS):$$PATH" buf lint
	cd sdk && rm -rf internal/pb && PATH="$(TOOLS):$$PATH" buf generate

fmt:
	gofmt -w host migrations sdk plugins

clean:
	rm -rf bin
