# Release targets, included by the Makefile. Tools (goreleaser, syft, cosign, krew,
# validate-krew-manifest) build from the Go module proxy into a cache outside the
# repository on first use; see hack/tools.sh.
#
#   make snapshot                        every archive of a release and its SBOM, unpublished and unsigned
#   make krew-manifest VERSION=v1.2.3    dist/krew/idx.yaml for those archives
#   make krew-validate                   check it with krew against the archives
#   make test-release                    host archive -> checksums, SBOM, signature -> manifest -> krew -> kubectl idx

SHELL := /usr/bin/env bash
GO ?= go
DIST := dist
# krew's validator requires the file name to be metadata.name + .yaml.
KREW_MANIFEST := $(DIST)/krew/idx.yaml
HOST_OS = $(shell $(GO) env GOOS)
HOST_ARCH = $(shell $(GO) env GOARCH)
GORELEASER = "$$(hack/tools.sh goreleaser)"
# goreleaser runs syft by name for the SBOMs (.goreleaser.yaml's sboms): the syft that
# hack/tools.sh built goes first on PATH. The snapshots skip signing, which is keyless
# and needs the release workflow's OIDC token; make test-release signs with a
# throwaway key instead (hack/release-verify-test.sh).
SNAPSHOT = syft=$$(hack/tools.sh syft) && PATH="$$(dirname "$$syft"):$$PATH" $(GORELEASER) release --snapshot --clean --skip=sign

.PHONY: tools release-check snapshot snapshot-host krew-manifest krew-validate test-release

tools: ## Build goreleaser, syft, cosign, krew and validate-krew-manifest at pinned versions into the tool cache.
	@hack/tools.sh goreleaser syft cosign krew validate-krew-manifest

release-check: ## Check .goreleaser.yaml with goreleaser check.
	$(GORELEASER) check

snapshot: release-check ## Build every release archive (linux, darwin, windows x amd64, arm64) and its SBOM into dist/, unpublished and unsigned.
	$(SNAPSHOT)

# goreleaser's --single-target exists for `build` only and makes no archive, so the
# host-only snapshot runs `release` on a copy of the config narrowed to this host:
# the same archive, name and contents as the full release builds for it.
snapshot-host: release-check ## Build only this host's release archive and its SBOM into dist/ (what test-release checks and installs).
	@set -euo pipefail; \
	cfg=$$(mktemp --suffix=.yaml 2>/dev/null || mktemp); trap 'rm -f "$$cfg"' EXIT; \
	sed -e 's/^    goos: \[.*\]$$/    goos: [$(HOST_OS)]/' -e 's/^    goarch: \[.*\]$$/    goarch: [$(HOST_ARCH)]/' \
		.goreleaser.yaml >"$$cfg"; \
	[[ $$(grep -cE '^    (goos: \[$(HOST_OS)\]|goarch: \[$(HOST_ARCH)\])$$' "$$cfg") == 2 ]] || \
		{ echo "snapshot-host: cannot narrow the goos/goarch lines of .goreleaser.yaml to $(HOST_OS)/$(HOST_ARCH)" >&2; exit 1; }; \
	$(SNAPSHOT) --config "$$cfg"

krew-manifest: ## Render dist/krew/idx.yaml for VERSION=vX.Y.Z from the archives in dist/ (AVAILABLE_ONLY=1 drops missing ones).
	hack/render-krew-manifest.sh --version "$(VERSION)" --dist $(DIST) --template plugins/krew.yaml \
		--out $(KREW_MANIFEST) $(if $(AVAILABLE_ONLY),--available-only)

krew-validate: ## Validate dist/krew/idx.yaml and krew install/uninstall every platform from its archive.
	hack/krew-install-test.sh --manifest $(KREW_MANIFEST) --dist $(DIST)

# The checksums, the SBOM and a signature of checksums.txt are checked as README's
# "Verify a release" says, with a throwaway key (hack/release-verify-test.sh). The
# version goreleaser gave the snapshot is read back from dist/metadata.json;
# `kubectl idx version` must print it, which proves the krew-installed binary ran.
test-release: snapshot-host ## Host archive -> checksums, SBOM, signature -> krew manifest -> validate -> krew install -> kubectl idx version -> uninstall.
	@set -euo pipefail; \
	hack/release-verify-test.sh --dist $(DIST); \
	version=$$(grep -o '"version": *"[^"]*"' $(DIST)/metadata.json | head -n1 | sed 's/.*"\([^"]*\)"$$/\1/'); \
	[[ -n "$$version" ]] || { echo "test-release: no version in $(DIST)/metadata.json" >&2; exit 1; }; \
	hack/render-krew-manifest.sh --version "v$$version" --dist $(DIST) --template plugins/krew.yaml \
		--out $(KREW_MANIFEST) --available-only; \
	hack/krew-install-test.sh --manifest $(KREW_MANIFEST) --dist $(DIST) --e2e --expect-version "$$version"
