#!/usr/bin/env bash
# Builds the control plane the end-to-end tests run from the Go module proxy into a cache
# outside the repository, keyed by version, and prints the directory (usable as
# KUBEBUILDER_ASSETS): kube-apiserver and etcd (envtest), kube-controller-manager and
# kube-scheduler, and kwok with the Stage configuration that plays kubelet for its fake
# nodes (kwok-stages.yaml).
#
# Nothing is downloaded as a prebuilt binary: a throwaway module requires
# k8s.io/kubernetes at KUBE_VERSION and replaces each of its staging modules with
# the matching v0.Y.Z release, which is enough for `go build` of its commands.
# etcd is built at the version kubernetes' own go.mod pins. kwok builds inside its
# own module, as hack/tools.sh builds krew.
#
# Each binary is built once, all in one go build invocation (the
# Kubernetes commands share most of their packages), and reused while it reports
# the version it was built for.
set -euo pipefail

KUBE_VERSION=${KUBE_VERSION:-v1.37.2}
STAGING_VERSION="v0.${KUBE_VERSION#v1.}"
# kwok v0.8.0 builds with Go 1.26 and drives 1.34 and 1.37 control planes alike (it
# only reads and writes nodes and pods through the API).
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
CACHE_ROOT=${KUBECTL_IDX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-idx}
OUT="$CACHE_ROOT/envtest/k8s-$KUBE_VERSION"
KUBE_COMMANDS=(kube-apiserver kube-controller-manager kube-scheduler)

log() { echo "envtest-assets: $*" >&2; }

# current NAME succeeds when $OUT holds NAME built for the version asked for.
current() {
  case $1 in
  kube-*) [[ -x "$OUT/$1" && "$("$OUT/$1" --version 2>/dev/null)" == "Kubernetes $KUBE_VERSION" ]] ;;
  etcd) [[ -x "$OUT/etcd" ]] ;;
  # The stages are written before the binary is moved into place, so a current
  # binary means current stages.
  kwok) [[ -x "$OUT/kwok" && -f "$OUT/kwok-stages.yaml" &&
    "$(KWOK_WORKDIR=/nonexistent "$OUT/kwok" --version 2>/dev/null)" == "kwok version $KWOK_VERSION "* ]] ;;
  esac
}

kube_missing=()
for bin in "${KUBE_COMMANDS[@]}" etcd; do
  current "$bin" || kube_missing+=("$bin")
done
kwok_missing=
current kwok || kwok_missing=1
if ((${#kube_missing[@]} == 0)) && [[ -z $kwok_missing ]]; then
  echo "$OUT"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$OUT"

if ((${#kube_missing[@]} > 0)); then
  gomod=$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  [[ -f "$gomod" ]] || { log "cannot find go.mod of k8s.io/kubernetes@$KUBE_VERSION"; exit 1; }

  etcd_version=$(awk '$1 == "go.etcd.io/etcd/server/v3" {print $2; exit}' "$gomod")
  [[ -n "$etcd_version" ]] || { log "k8s.io/kubernetes@$KUBE_VERSION does not pin go.etcd.io/etcd/server/v3"; exit 1; }

  {
    echo "module envtestassets"
    echo
    echo "go 1.24"
    echo
    echo "require k8s.io/kubernetes $KUBE_VERSION"
    echo
    # Every `k8s.io/x => ./staging/src/k8s.io/x` line becomes `k8s.io/x => k8s.io/x v0.Y.Z`.
    grep -E '^[[:space:]]*k8s\.io/[^ ]+ => \./staging/' "$gomod" |
      awk -v v="$STAGING_VERSION" '{print "replace " $1 " => " $1 " " v}'
  } >"$work/go.mod"
  {
    printf '//go:build tools\n\npackage tools\n\nimport (\n\t_ "go.etcd.io/etcd/server/v3"\n'
    for cmd in "${KUBE_COMMANDS[@]}"; do
      printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$cmd"
    done
    printf ')\n'
  } >"$work/tools.go"
  log "resolving k8s.io/kubernetes $KUBE_VERSION (staging $STAGING_VERSION) and etcd $etcd_version"
  (cd "$work" && go get "go.etcd.io/etcd/server/v3@$etcd_version" && go mod tidy) >&2
  # The version packages are stamped as the release build does, so each command
  # reports its real version (/version, `kubectl version`, --version) instead of
  # v0.0.0-master.
  minor=${KUBE_VERSION#v1.}
  minor=${minor%%.*}
  ldflags="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  # One go build for every missing binary: the commands share most of their packages,
  # so one invocation compiles each package once and links the binaries in parallel.
  # The version stamps are ignored where a binary does not link those packages (etcd).
  pkgs=()
  for bin in "${kube_missing[@]}"; do
    case $bin in
    etcd) pkgs+=(go.etcd.io/etcd/server/v3) ;;
    *) pkgs+=("k8s.io/kubernetes/cmd/$bin") ;;
    esac
  done
  start=$SECONDS
  log "building ${kube_missing[*]} $KUBE_VERSION in one go build (about 10 minutes on 2 cores on first run)"
  mkdir -p "$work/bin"
  (cd "$work" && CGO_ENABLED=0 go build -trimpath -ldflags="$ldflags" -o "$work/bin/" "${pkgs[@]}") >&2 ||
    { log "building ${kube_missing[*]} failed"; exit 1; }
  # go build names etcd's binary after its module path without the major version.
  [[ -x "$work/bin/server" ]] && mv "$work/bin/server" "$work/bin/etcd"
  # Moved into place only once all are built, so an interrupted build never leaves a
  # binary that current would take as complete.
  for bin in "${kube_missing[@]}"; do
    mv "$work/bin/$bin" "$OUT/$bin"
  done
  log "built ${kube_missing[*]} in $((SECONDS - start))s"
fi

if [[ -n $kwok_missing ]]; then
  start=$SECONDS
  log "building kwok $KWOK_VERSION (minutes on first run)"
  # go install would also ask the proxy for the module's version list; download and
  # build inside the module instead, whose go.mod and go.sum pin every dependency.
  src=$(go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [[ -d "$src" ]] || { log "cannot download sigs.k8s.io/kwok@$KWOK_VERSION"; exit 1; }
  # kwok has no built-in stages: kwokctl passes these, from the same release, to kwok
  # through --config. node-initialize and node-heartbeat-with-lease make nodes Ready
  # (kwok renews their leases); pod-ready runs scheduled pods, pod-complete ends the
  # pods of Jobs and pod-delete finishes deletions.
  stages=(
    node/fast/node-initialize.yaml
    node/heartbeat-with-lease/node-heartbeat-with-lease.yaml
    pod/fast/pod-ready.yaml
    pod/fast/pod-complete.yaml
    pod/fast/pod-delete.yaml
  )
  {
    echo "# Stages of kwok $KWOK_VERSION (kustomize/stage), as kwokctl configures them."
    for s in "${stages[@]}"; do
      echo "---"
      cat "$src/kustomize/stage/$s"
    done
  } >"$OUT/kwok-stages.yaml.tmp"
  mv "$OUT/kwok-stages.yaml.tmp" "$OUT/kwok-stages.yaml"
  (cd "$src" && GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0 \
    go build -trimpath -buildvcs=false -ldflags="-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" \
    -o "$OUT/kwok.tmp" ./cmd/kwok) >&2 ||
    { rm -f "$OUT/kwok.tmp"; log "building kwok $KWOK_VERSION failed"; exit 1; }
  mv "$OUT/kwok.tmp" "$OUT/kwok"
  log "built kwok $KWOK_VERSION in $((SECONDS - start))s"
fi
echo "$OUT"
