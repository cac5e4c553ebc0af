#!/usr/bin/env bash
# Installs the release tools at pinned versions from the Go module proxy into a cache
# outside the repository, one directory per tool and version, and prints the path of
# each binary asked for (one a line). A tool already in the cache is reused as is.
#
#   hack/tools.sh goreleaser krew validate-krew-manifest syft cosign
#
# (`make generate` and `make lint` use deepcopy-gen and goimports the same way.)
#
# Nothing prebuilt is downloaded: each tool is built from its module's source.
# goreleaser v2.16.0 is the last release that builds with Go 1.26; krew and its
# validator come from the same sigs.k8s.io/krew v0.4.4. kubectl, for machines that
# have none, is kubectl's own main built against k8s.io/kubectl at KUBECTL_VERSION.
# deepcopy-gen comes from k8s.io/code-generator at the release of the project's
# k8s.io modules (KUBECTL_VERSION), so the deep copies it writes are the ones
# apimachinery's own types have; goimports from golang.org/x/tools. syft v1.57.1
# (goreleaser's default SBOM tool, `sboms` in .goreleaser.yaml) and cosign v2.6.5
# (signs and verifies checksums.txt) are the newest of each that build with Go 1.26;
# both stamp the version they report through ldflags, as their own release builds do.
#
# This is `go install PKG@VERSION` done in two steps: `go mod download` fetches the
# module, then `go build` runs inside it, so the module's own go.mod and go.sum pin
# every dependency exactly as go install would. The split is there because go install
# also looks up the module's deprecation through the proxy's version list, and some
# proxies refuse that list for sigs.k8s.io/krew (403), failing the install outright.
set -euo pipefail

GORELEASER_VERSION=${GORELEASER_VERSION:-v2.16.0}
KREW_VERSION=${KREW_VERSION:-v0.4.4}
KUBECTL_VERSION=${KUBECTL_VERSION:-v0.37.2}
CODE_GENERATOR_VERSION=${CODE_GENERATOR_VERSION:-$KUBECTL_VERSION}
GOIMPORTS_VERSION=${GOIMPORTS_VERSION:-v0.52.0}
SYFT_VERSION=${SYFT_VERSION:-v1.57.1}
COSIGN_VERSION=${COSIGN_VERSION:-v2.6.5}
CACHE_ROOT=${KUBECTL_IDX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-idx}

log() { echo "tools: $*" >&2; }

# install NAME MODULE VERSION PACKAGE [LDFLAGS] builds PACKAGE (a path inside
# MODULE@VERSION) into the cache unless it is there, and prints the binary's path.
install() {
  local name=$1 module=$2 version=$3 pkg=$4 ldflags=${5-}
  local dir="$CACHE_ROOT/tools/$name-$version"
  if [[ ! -x "$dir/$name" ]]; then
    log "building $name $version from $module (minutes on first run)"
    local start=$SECONDS src
    src=$(go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    [[ -d "$src" ]] || { log "cannot download $module@$version"; return 1; }
    mkdir -p "$dir"
    # Built under a temporary name and moved into place, so an interrupted build
    # never leaves a binary that the check above would take as complete.
    (cd "$src" && GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0 \
      go build -trimpath -buildvcs=false ${ldflags:+-ldflags "$ldflags"} -o "$dir/$name.tmp" "./$pkg") >&2 ||
      { rm -f "$dir/$name.tmp"; log "building $name $version failed"; return 1; }
    mv "$dir/$name.tmp" "$dir/$name"
    log "built $name $version in $((SECONDS - start))s"
  fi
  echo "$dir/$name"
}

# install_kubectl builds kubectl from a throwaway module whose main is the one in
# k8s.io/kubernetes/cmd/kubectl: that module cannot be required directly (its go.mod
# replaces the staging modules with local paths), k8s.io/kubectl can.
install_kubectl() {
  local dir="$CACHE_ROOT/tools/kubectl-$KUBECTL_VERSION"
  if [[ ! -x "$dir/kubectl" ]]; then
    log "building kubectl from k8s.io/kubectl $KUBECTL_VERSION (minutes on first run)"
    local start=$SECONDS work
    work=$(mktemp -d)
    mkdir -p "$dir"
    cat >"$work/go.mod" <<GOMOD
module kubectltool

go 1.24

require (
	k8s.io/component-base $KUBECTL_VERSION
	k8s.io/kubectl $KUBECTL_VERSION
)
GOMOD
    cat >"$work/main.go" <<'GO'
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
GO
    # kubectl reports the version Kubernetes' own build stamps in; v0.Y.Z is v1.Y.Z.
    local stamp="-X k8s.io/client-go/pkg/version.gitVersion=v1.${KUBECTL_VERSION#v0.}"
    stamp+=" -X k8s.io/component-base/version.gitVersion=v1.${KUBECTL_VERSION#v0.}"
    (cd "$work" && export GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0 &&
      go mod tidy && go build -trimpath -buildvcs=false -ldflags "-s -w $stamp" -o "$dir/kubectl.tmp" .) >&2 ||
      { rm -rf "$work" "$dir/kubectl.tmp"; log "building kubectl $KUBECTL_VERSION failed"; return 1; }
    rm -rf "$work"
    mv "$dir/kubectl.tmp" "$dir/kubectl"
    log "built kubectl $KUBECTL_VERSION in $((SECONDS - start))s"
  fi
  echo "$dir/kubectl"
}

(($# > 0)) || set -- goreleaser syft cosign krew validate-krew-manifest
for tool in "$@"; do
  case $tool in
  goreleaser) install goreleaser github.com/goreleaser/goreleaser/v2 "$GORELEASER_VERSION" . ;;
  krew) install krew sigs.k8s.io/krew "$KREW_VERSION" cmd/krew ;;
  validate-krew-manifest) install validate-krew-manifest sigs.k8s.io/krew "$KREW_VERSION" cmd/validate-krew-manifest ;;
  kubectl) install_kubectl ;;
  deepcopy-gen) install deepcopy-gen k8s.io/code-generator "$CODE_GENERATOR_VERSION" cmd/deepcopy-gen ;;
  goimports) install goimports golang.org/x/tools "$GOIMPORTS_VERSION" cmd/goimports ;;
  syft) install syft github.com/anchore/syft "$SYFT_VERSION" cmd/syft "-s -w -X main.version=${SYFT_VERSION#v}" ;;
  cosign) install cosign github.com/sigstore/cosign/v2 "$COSIGN_VERSION" cmd/cosign \
    "-s -w -X sigs.k8s.io/release-utils/version.gitVersion=$COSIGN_VERSION" ;;
  *)
    echo "tools: unknown tool \"$tool\" (known: goreleaser, krew, validate-krew-manifest, kubectl, deepcopy-gen, goimports, syft, cosign)" >&2
    exit 1
    ;;
  esac
done
