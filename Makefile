# kubectl-idx build, install, test and demo entry points.
SHELL := /usr/bin/env bash
GO ?= go
BIN_DIR := $(CURDIR)/bin
BINARY := $(BIN_DIR)/kubectl-idx
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo none)
DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
VERSION_PKG := github.com/kubectl-idx/kubectl-idx/internal/version
LDFLAGS := -s -w -X $(VERSION_PKG).Version=$(VERSION) -X $(VERSION_PKG).Commit=$(COMMIT) -X $(VERSION_PKG).Date=$(DATE)
# The API server versions the end-to-end tests run against: KUBE_VERSION for every test
# (built by hack/envtest-assets.sh's default), KUBE_PREVIOUS for the table and JSON
# comparison of every listable type, which runs on both.
KUBE_PREVIOUS ?= v1.34.4
INSTALL_DIR ?= $(shell $(GO) env GOPATH)/bin

.PHONY: build install test test-unit fuzz test-e2e envtest-assets lint demo bench bench-contexts

include hack/release.mk
build: ## Build bin/kubectl-idx.
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BINARY) .

install: build ## Install kubectl-idx into $(INSTALL_DIR) so `kubectl idx` finds it.
	install -d $(INSTALL_DIR)
	install -m 0755 $(BINARY) $(INSTALL_DIR)/kubectl-idx
	install -m 0755 plugins/kubectl_complete-idx $(INSTALL_DIR)/kubectl_complete-idx
	@echo "installed $(INSTALL_DIR)/kubectl-idx; make sure $(INSTALL_DIR) is on PATH, then run: kubectl idx pods -A"

envtest-assets: ## Build kube-apiserver, etcd, kube-controller-manager, kube-scheduler and kwok from the Go module proxy (cached outside the repo).
	@hack/envtest-assets.sh

lint: ## gofmt, go vet and go mod tidy with no diff.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...
	$(GO) mod tidy -diff

test-unit: ## Unit tests with the cache mutation detector on.
	KUBE_CACHE_MUTATION_DETECTOR=true $(GO) test -count=1 . ./cmd/... ./pkg/... ./internal/...

# Each fuzz target runs for a number of executions, not a duration: with a
# duration, Go 1.26's fuzzing coordinator can fail a run that found nothing with
# "context deadline exceeded" at the end of -fuzztime (golang/go#75804, fixed in
# Go 1.27). hack/fuzz-budgets gives each target's count, sized to what about ten
# seconds explore on 2 cores (a target not listed gets FUZZ_DEFAULT_BUDGET);
# FUZZTIME=... overrides every target, with a count (50000x) or, for a long run
# by hand, a duration. go test -fuzz takes one target per run and links an
# instrumented test binary every time (20s and more for cmd/), so the binary is
# built once per package and run once per target, in the package directory as go
# test runs it. Each run starts from the seeds and testdata/fuzz, not go test's
# growing corpus cache. Minimizing an input (60s by default) is bounded too, so a
# crasher is reported in seconds; a crasher fails the run and is written to the
# package's testdata/fuzz.
FUZZTIME ?=
FUZZ_DEFAULT_BUDGET ?= 10000x
FUZZMINIMIZETIME ?= 5s
FUZZ_DIRS := cmd pkg

fuzz: ## Run every fuzz target for its budget of executions (hack/fuzz-budgets); a crasher fails it and lands in the package's testdata/fuzz.
	@set -e; rm -rf $(BIN_DIR)/fuzz; mkdir -p $(BIN_DIR)/fuzz; \
	dirs=$$(grep -rl --include='*_test.go' '^func Fuzz' $(FUZZ_DIRS) | xargs -r -n1 dirname | sort -u); \
	for dir in $$dirs; do \
		bin=$(BIN_DIR)/fuzz/$$(echo $$dir | tr / _).test; \
		$(GO) test -c -fuzz=. -o $$bin ./$$dir; \
		for target in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*\*testing\.F).*/\1/p' $$dir/*_test.go); do \
			budget=$$(awk -v t="$$target" '$$1 == t {print $$2}' hack/fuzz-budgets); \
			budget=$${FUZZTIME:-$${budget:-$(FUZZ_DEFAULT_BUDGET)}}; \
			echo "fuzz ./$$dir $$target ($$budget)"; \
			(cd $$dir && $$bin -test.run '^$$' -test.fuzz "^$$target\$$" -test.fuzztime $$budget -test.fuzzminimizetime $(FUZZMINIMIZETIME) -test.fuzzcachedir $(BIN_DIR)/fuzz/cache/$$dir); \
		done; \
	done

# Mermaid's own parser checks the -o mermaid graphs in the end-to-end tests; npm
# installs it (pinned by the lockfile) from the npm registry once.
MERMAID_DIR := test/e2e/testdata/mermaid
$(MERMAID_DIR)/node_modules/.package-lock.json: $(MERMAID_DIR)/package-lock.json
	@command -v npm >/dev/null || { echo "npm is required for the Mermaid checks (apt-get install nodejs npm)"; exit 1; }
	npm ci --prefix $(MERMAID_DIR) --no-audit --no-fund --loglevel=error

# The MCP project's own inspector lists and calls the tools of kubectl idx mcp in the
# end-to-end tests; npm installs it (pinned by the lockfile) from the npm registry once.
INSPECTOR_DIR := test/e2e/testdata/mcp-inspector
$(INSPECTOR_DIR)/node_modules/.package-lock.json: $(INSPECTOR_DIR)/package-lock.json
	@command -v npm >/dev/null || { echo "npm is required for the MCP inspector checks (apt-get install nodejs npm)"; exit 1; }
	npm ci --prefix $(INSPECTOR_DIR) --no-audit --no-fund --loglevel=error

# The tests compare with kubectl of the same release as the client libraries
# (hack/tools.sh builds it from the Go module proxy), whatever kubectl the
# machine has: its wording, formats and columns are the ones to match.
test-e2e: build $(MERMAID_DIR)/node_modules/.package-lock.json $(INSPECTOR_DIR)/node_modules/.package-lock.json ## End-to-end tests against a real kube-apiserver and etcd, and a control plane driven by real controllers.
	@command -v jq >/dev/null || { echo "jq is required (apt-get install jq)"; exit 1; }
	@command -v dot >/dev/null || { echo "dot is required (apt-get install graphviz)"; exit 1; }
	KUBEBUILDER_ASSETS=$$(hack/envtest-assets.sh) KUBECTL_IDX_PREVIOUS_ASSETS=$$(KUBE_VERSION=$(KUBE_PREVIOUS) hack/envtest-assets.sh) \
		KUBECTL=$$(hack/tools.sh kubectl) KUBECTL_IDX_BINARY=$(BINARY) KUBE_CACHE_MUTATION_DETECTOR=true \
		$(GO) test -count=1 -timeout 30m ./test/e2e/...

test: lint test-unit fuzz test-e2e test-release ## Everything CI runs.

# The demo runs kubectl as a user would; a machine without one gets kubectl built from
# the Go module proxy (hack/tools.sh), cached outside the repository.
demo: build ## Start a local control plane run by the real controllers, load a workload and run kubectl idx against it.
	@kubectl_dir=$$(command -v kubectl >/dev/null || dirname "$$(hack/tools.sh kubectl)"); \
	PATH="$${kubectl_dir:+$$kubectl_dir:}$$PATH" KUBEBUILDER_ASSETS=$$(hack/envtest-assets.sh) $(GO) run ./test/demo -binary $(BINARY)

bench: build ## Time kubectl idx against kubectl get and the server's own LISTs on a real API server, on pods as heavy as a production cluster's (PODS=20000 NAMESPACES=20 RUNS=3; BASELINE=path/to/an/earlier/kubectl-idx times it too; SCALE=1 measures memory per 1,000 pods instead; LIGHT=1 creates lighter pods; SERVE=1 keeps the server up for --profile runs; CACHE=1 times each command through the warm cache too; MCP=1 measures kubectl idx mcp from its client instead).
	@KUBEBUILDER_ASSETS=$$(hack/envtest-assets.sh) KUBECTL=$$(hack/tools.sh kubectl) $(GO) run ./test/bench -binary $(BINARY) -pods $${PODS:-5000} -namespaces $${NAMESPACES:-10} -runs $${RUNS:-1} $${SCALE:+-scale} $${LIGHT:+-light} $${SERVE:+-serve} $${BASELINE:+-baseline $$BASELINE} $${CACHE:+-cache} $${MCP:+-mcp}

bench-contexts: build ## Time kubectl idx over several clusters at once against the slowest single one and kubectl get over each in turn (CONTEXTS=3, PODS=5000 per cluster, RUNS=3; LIGHT=1 creates lighter pods).
	@KUBEBUILDER_ASSETS=$$(hack/envtest-assets.sh) KUBECTL=$$(hack/tools.sh kubectl) $(GO) run ./test/bench -binary $(BINARY) -contexts $${CONTEXTS:-3} -pods $${PODS:-5000} -runs $${RUNS:-3} $${LIGHT:+-light}
