#!/usr/bin/env bash
# Checks a rendered krew manifest against the archives it names, the way a user's
# krew will see them, without the network:
#
#   1. validate-krew-manifest -skip-install: structure, file name = metadata.name,
#      one platform per os/arch. (Its own install step downloads each uri, which a
#      snapshot has not published, so step 2 does that part from local archives.)
#   2. For every platform: krew install --manifest --archive into a throwaway
#      KREW_ROOT with KREW_OS/KREW_ARCH set, then check the binary, the LICENSE
#      and kubectl_complete-idx are installed and that krew uninstall removes them.
#   3. A copy of the manifest with one wrong sha256 must make krew install fail.
#   4. With --e2e: install the host platform, run `kubectl idx version --client`
#      through kubectl's plugin discovery with only $KREW_ROOT/bin and kubectl on PATH,
#      expect --expect-version in its output; copy kubectl_complete-idx as the
#      manifest's caveats say and complete `kubectl idx ""` through kubectl;
#      uninstall, and expect `kubectl idx` to be gone.
#
#   hack/krew-install-test.sh --manifest dist/krew/idx.yaml --dist dist \
#                             [--e2e --expect-version 1.2.3]
set -euo pipefail

manifest="" dist=dist e2e=0 expect_version=""
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/lib.sh
source "$here/lib.sh"
while (($# > 0)); do
  case $1 in
  --manifest) manifest=${2-}; shift 2 || die "--manifest needs a value" ;;
  --dist) dist=${2-}; shift 2 || die "--dist needs a value" ;;
  --e2e) e2e=1; shift ;;
  --expect-version) expect_version=${2-}; shift 2 || die "--expect-version needs a value" ;;
  *) die "unknown argument \"$1\"" ;;
  esac
done
[[ -f "$manifest" ]] || die "manifest \"$manifest\" does not exist (make krew-manifest renders it)"
[[ $e2e == 0 || -n "$expect_version" ]] || die "--e2e needs --expect-version"

krew=${KREW:-$("$here/tools.sh" krew)}
validator=${VALIDATE_KREW_MANIFEST:-$("$here/tools.sh" validate-krew-manifest)}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# krew must not phone home for upgrades nor see the developer's own krew.
export KREW_NO_UPGRADE_CHECK=1
unset KREW_ROOT KREW_OS KREW_ARCH

# new_root DIR makes DIR a KREW_ROOT. krew uninstall refuses to run before an index
# is cloned, which `krew update` does from GitHub; an empty git repository where
# the default index goes passes that check offline.
new_root() {
  mkdir -p "$1/index/default"
  git -C "$1/index/default" init -q
}

# 1. Structure.
run "$work/validate.log" "$validator" -manifest "$manifest" -skip-install ||
  die "validate-krew-manifest rejected $manifest"
log "ok: validate-krew-manifest -skip-install $manifest"

name=$(awk '/^metadata:/ {m = 1; next} m && $1 == "name:" {print $2; exit}' "$manifest")
version=$(awk '$1 == "version:" {gsub(/"/, "", $2); print $2; exit}' "$manifest")
[[ -n "$name" && -n "$version" ]] || die "cannot read metadata.name and spec.version from $manifest"

# "os arch archive bin" for each platform of the manifest (rendered from
# plugins/krew.yaml, so one key a line in a known order).
platforms=$(awk '
  $1 == "os:" {os = $2} $1 == "arch:" {arch = $2}
  $1 == "uri:" {n = split($2, p, "/"); archive = p[n]}
  $1 == "bin:" {print os, arch, archive, $2}
' "$manifest")
[[ -n "$platforms" ]] || die "no platforms in $manifest"

# 2. Every platform installs from its archive, with its license, and uninstalls.
while read -r os arch archive bin; do
  [[ -f "$dist/$archive" ]] || die "$dist/$archive is missing for $os/$arch"
  root="$work/root-$os-$arch"
  new_root "$root"
  link="$root/bin/kubectl-$name"
  [[ $os != windows ]] || link+=.exe
  run "$work/install.log" env KREW_ROOT="$root" KREW_OS="$os" KREW_ARCH="$arch" PATH="$root/bin:$PATH" \
    "$krew" install --manifest="$manifest" --archive="$dist/$archive" ||
    die "krew install of $os/$arch from $dist/$archive failed"
  store="$root/store/$name/$version"
  [[ -f "$store/$bin" ]] || die "$os/$arch: $bin is not in $store after install"
  [[ -f "$store/LICENSE" ]] || die "$os/$arch: LICENSE is not in $store after install (krew's validator requires one)"
  [[ -x "$store/kubectl_complete-$name" ]] || die "$os/$arch: kubectl_complete-$name is not an executable in $store after install"
  [[ -L "$link" ]] || die "$os/$arch: krew did not link $link"
  run "$work/uninstall.log" env KREW_ROOT="$root" KREW_OS="$os" KREW_ARCH="$arch" PATH="$root/bin:$PATH" \
    "$krew" uninstall "$name" || die "krew uninstall on $os/$arch failed"
  [[ ! -e "$link" && ! -L "$link" && ! -e "$root/store/$name" ]] ||
    die "$os/$arch: krew uninstall left $link or $root/store/$name behind"
  log "ok: krew install/uninstall $os/$arch from $archive (binary, LICENSE, kubectl_complete-$name present, then removed)"
done <<<"$platforms"

# 3. A wrong sha256 must be refused. The first platform's digest is replaced by the
# digest of something else, and krew must fail on that platform's real archive.
read -r os arch archive _ <<<"$platforms"
mkdir -p "$work/tampered"
awk -v bad="$(printf 'not the archive' | { sha256sum 2>/dev/null || shasum -a 256; } | cut -d' ' -f1)" '
  $1 == "sha256:" && !done {sub(/"[0-9a-f]+"/, "\"" bad "\""); done = 1} {print}
' "$manifest" >"$work/tampered/$name.yaml"
! cmp -s "$manifest" "$work/tampered/$name.yaml" || die "could not tamper with the sha256 in $manifest"
if env KREW_ROOT="$work/root-tampered" KREW_OS="$os" KREW_ARCH="$arch" PATH="$work/root-tampered/bin:$PATH" \
  "$krew" install --manifest="$work/tampered/$name.yaml" --archive="$dist/$archive" >"$work/tampered.log" 2>&1; then
  indent <"$work/tampered.log"
  die "krew installed $archive although the manifest's sha256 does not match it"
fi
grep -q 'checksum does not match' "$work/tampered.log" || {
  indent <"$work/tampered.log"
  die "krew refused the tampered manifest, but not for its checksum"
}
log "ok: krew refuses $archive when the manifest's sha256 does not match"

# 4. The host platform through kubectl's plugin discovery.
((e2e)) || exit 0
host_os=$(go env GOOS)
host_arch=$(go env GOARCH)
read -r _ _ archive _ < <(awk -v o="$host_os" -v a="$host_arch" '$1 == o && $2 == a' <<<"$platforms") || true
[[ -n "${archive:-}" ]] || die "$manifest has no platform for this host ($host_os/$host_arch)"

# kubectl 1.34 is built from the module proxy when none is installed.
kubectl=${KUBECTL:-$(command -v kubectl || "$here/tools.sh" kubectl)}
root="$work/root-e2e"
new_root "$root"
mkdir -p "$work/kubectl-only"
ln -s "$kubectl" "$work/kubectl-only/kubectl"
# Only krew's bin and kubectl on PATH: the plugin kubectl runs must be krew's.
e2e_path="$root/bin:$work/kubectl-only"
export KUBECONFIG="$work/no-kubeconfig" # nothing here may need a cluster

run "$work/install.log" env KREW_ROOT="$root" PATH="$root/bin:$PATH" \
  "$krew" install --manifest="$manifest" --archive="$dist/$archive" ||
  die "krew install of the host platform from $dist/$archive failed"
PATH=$e2e_path "$kubectl" plugin list >"$work/plugins.log" 2>&1 || true
grep -qx "$root/bin/kubectl-$name" "$work/plugins.log" || {
  indent <"$work/plugins.log"
  die "kubectl plugin list does not show $root/bin/kubectl-$name"
}
if ! out=$(PATH=$e2e_path "$kubectl" "$name" version --client 2>&1); then
  indent <<<"$out"
  die "kubectl $name version --client failed"
fi
[[ $out == *"$expect_version"* ]] || {
  indent <<<"$out"
  die "kubectl $name version --client does not print $expect_version"
}
log "ok: kubectl $name version --client through plugin discovery printed: $(head -n1 <<<"$out")"

# Plugin completion as the caveats in the manifest tell users to set it up: kubectl
# completes `kubectl idx <TAB>` by running kubectl_complete-idx from PATH.
cp "$root/store/$name/$version/kubectl_complete-$name" "$root/bin/"
if ! out=$(PATH=$e2e_path "$kubectl" __complete "$name" "" 2>&1) || ! grep -q '^version' <<<"$out"; then
  indent <<<"$out"
  die "kubectl __complete $name \"\" does not offer $name's version subcommand through kubectl_complete-$name"
fi
rm "$root/bin/kubectl_complete-$name" # krew uninstall removes only what krew installed
log "ok: kubectl __complete $name \"\" completes through kubectl_complete-$name"

run "$work/uninstall.log" env KREW_ROOT="$root" PATH="$root/bin:$PATH" "$krew" uninstall "$name" ||
  die "krew uninstall $name failed"
[[ ! -e "$root/bin/kubectl-$name" && ! -L "$root/bin/kubectl-$name" ]] || die "krew uninstall left $root/bin/kubectl-$name"
if out=$(PATH=$e2e_path "$kubectl" "$name" version --client 2>&1); then
  indent <<<"$out"
  die "kubectl $name version still works after krew uninstall"
fi
log "ok: after krew uninstall $name, kubectl $name is gone"
