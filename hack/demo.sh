#!/usr/bin/env bash
# make demo: builds what the demo needs, one step at a time, then becomes the demo
# program (test/demo), which starts the control plane, applies the workload and runs
# kubectl idx against it.
#
#   hack/demo.sh [demo program flags: -exit, -dir DIR]
#
# Each step says what it builds and how long it took in the last run; the durations
# are kept in $KUBECTL_IDX_DEMO_TIMINGS (default ~/.cache/kubectl-idx/demo-timings,
# next to the control plane's binaries), one "step<TAB>seconds" line each, which the
# demo program adds its own steps to. A first run has no figures yet and gives those
# of a fresh 2-core machine instead.
#
# The demo program replaces this script (exec), so a SIGTERM that make forwards
# reaches it directly. It stops the control plane on Ctrl-C, SIGINT or SIGTERM and
# exits 0, and so does this script when interrupted during a build (what was built
# is kept: the next run goes on from there), so make prints no error for an
# interrupt.
#
# Environment: GO (go) and BINARY (bin/kubectl-idx) as the Makefile sets them; KUBECTL_IDX_BINARY demos that binary instead of building one (the
# end-to-end test of the demo uses the binary the tests built).
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
CACHE_ROOT=${KUBECTL_IDX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-idx}
TIMINGS=${KUBECTL_IDX_DEMO_TIMINGS:-$CACHE_ROOT/demo-timings}
DEMO_PROGRAM=bin/demo

current=""
trap 'echo "demo: interrupted while ${current:-starting}; make demo goes on from there next time" >&2; exit 0' INT TERM

# last KEY prints the seconds step KEY took in the last run, or nothing.
last() {
  [[ -f "$TIMINGS" ]] || return 0
  awk -F '\t' -v k="$1" '$1 == k && $2 ~ /^[0-9.]+$/ {print $2; exit}' "$TIMINGS"
}

# human SECONDS prints a duration as the demo program does: 2.9s, 31s, 4m42s.
human() {
  awk -v s="$1" 'BEGIN {
    if (s < 10) { t = sprintf("%.1f", s); sub(/\.0$/, "", t); print t "s"; exit }
    s = int(s + 0.5)
    if (s < 60) print s "s"; else printf "%dm%ds\n", s / 60, s % 60
  }'
}

# record KEY SECONDS replaces KEY's line in the timings file, keeping the others.
record() {
  mkdir -p "$(dirname "$TIMINGS")"
  local tmp="$TIMINGS.tmp.$$"
  {
    [[ -f "$TIMINGS" ]] && awk -F '\t' -v k="$1" '$1 != k' "$TIMINGS"
    printf '%s\t%s\n' "$1" "$2"
  } >"$tmp" && mv "$tmp" "$TIMINGS"
}

# step KEY WHAT COLD CMD... runs CMD, saying beforehand what it builds and how long it
# took last time (COLD, the figure of a fresh 2-core machine, on a first run).
step() {
  local key=$1 what=$2 cold=$3 prev start
  shift 3
  prev=$(last "$key")
  if [[ -n "$prev" ]]; then
    echo "demo: $what (last time $(human "$prev"))" >&2
  else
    echo "demo: $what (no earlier run here; $cold on a fresh 2-core machine when nothing is built yet)" >&2
  fi
  current=$what
  start=$SECONDS
  "$@"
  record "$key" "$((SECONDS - start))"
  echo "demo: done in $(human "$((SECONDS - start))")" >&2
}

binary=${KUBECTL_IDX_BINARY:-}
if [[ -z "$binary" ]]; then
  binary=${BINARY:-bin/kubectl-idx}
  step plugin "building ${binary#"$PWD"/} with its Go modules" "1.5 to 2 minutes" \
    make --no-print-directory build
fi

# The demo runs kubectl as a user would; a machine without one gets kubectl built from
# the Go module proxy (hack/tools.sh), cached outside the repository.
if ! command -v kubectl >/dev/null; then
  kubectl_path=""
  build_kubectl() { kubectl_path=$(hack/tools.sh kubectl); }
  step kubectl "building kubectl, as this machine has none" "about 2 minutes" build_kubectl
  PATH="$(dirname "$kubectl_path"):$PATH"
fi

assets=""
build_assets() { assets=$(hack/envtest-assets.sh); }
step control-plane-binaries \
  "building kube-apiserver, etcd, kube-controller-manager, kube-scheduler and kwok into $CACHE_ROOT/envtest" \
  "6 to 8.5 minutes" build_assets

step demo-program "building the demo program ($DEMO_PROGRAM)" "2 to 3 minutes" \
  "$GO" build -o "$DEMO_PROGRAM" ./test/demo

trap - INT TERM
KUBEBUILDER_ASSETS=$assets exec "$DEMO_PROGRAM" -binary "$binary" -timings "$TIMINGS" "$@"
