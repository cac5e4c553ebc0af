#!/usr/bin/env bash
# Checks the SBOMs and the signature of a release's checksums the way docs/development.md's
# "Verify a release" tells users to, on a snapshot in dist/, without the network:
#
#   1. checksums.txt names every archive and its SBOM, and `sha256sum -c` passes.
#   2. Every archive has <archive>.sbom.json, an SPDX document that lists the main
#      module and every module compiled into the archive's binary at the version
#      `go version -m` reads from that binary.
#   3. checksums.txt signed with a throwaway key pair (cosign generate-key-pair with
#      an empty password, cosign sign-blob --key, no transparency log) verifies with
#      cosign verify-blob --key. The release itself is signed keyless in
#      .github/workflows/release.yml, which needs the workflow's OIDC token and
#      Sigstore's services; what this proves is that checksums.txt, as goreleaser
#      writes it, is what gets signed and that the signature covers every byte.
#   4. A checksums.txt with one digit changed fails that verification, and an archive
#      with one byte changed fails sha256sum -c.
#
# cosign runs in a network namespace of its own where `unshare` can make one (root,
# or unprivileged user namespaces), so the test cannot reach Rekor, Fulcio or the
# TUF repository even by mistake; verify-blob warns that it could not fetch the TUF
# root, which a key-based verification does not need.
#
#   hack/release-verify-test.sh --dist dist
set -euo pipefail

dist=dist
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/lib.sh
source "$here/lib.sh"
while (($# > 0)); do
  case $1 in
  --dist) dist=${2-}; shift 2 || die "--dist needs a value" ;;
  *) die "unknown argument \"$1\"" ;;
  esac
done
[[ -f "$dist/checksums.txt" ]] || die "$dist/checksums.txt does not exist (make snapshot-host writes it)"
command -v jq >/dev/null || die "jq is required (apt-get install jq)"

cosign=${COSIGN:-$("$here/tools.sh" cosign)}
module=$(cd "$here/.." && go list -m)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dist=$(cd "$dist" && pwd)

# offline CMD... runs CMD without a network where this machine can make a namespace
# without one.
if unshare -rn true 2>/dev/null; then
  offline() { unshare -rn "$@"; }
else
  log "note: unshare cannot make a network namespace here; cosign runs with this machine's network"
  offline() { "$@"; }
fi
# cosign keeps Sigstore's TUF metadata under TUF_ROOT (default ~/.sigstore).
export TUF_ROOT="$work/sigstore" COSIGN_PASSWORD=""

# 1. Checksums.
archives=$(awk '$2 ~ /\.(tar\.gz|zip)$/ {print $2}' "$dist/checksums.txt")
[[ -n "$archives" ]] || die "$dist/checksums.txt names no archive"
for archive in $archives; do
  grep -qE "^[0-9a-f]{64}  $archive\.sbom\.json$" "$dist/checksums.txt" ||
    die "$dist/checksums.txt does not name $archive.sbom.json"
done
(cd "$dist" && run "$work/sha256sum.log" sha256sum -c checksums.txt) || die "sha256sum -c $dist/checksums.txt"
log "ok: sha256sum -c checksums.txt ($(wc -l <"$dist/checksums.txt") files)"

# 2. SBOMs.
for archive in $archives; do
  sbom="$dist/$archive.sbom.json"
  [[ -f "$sbom" ]] || die "$archive has no SBOM ($sbom)"
  jq -e '.spdxVersion | startswith("SPDX-")' "$sbom" >/dev/null || die "$sbom is not an SPDX document"
  x="$work/x-$archive"
  mkdir -p "$x"
  case $archive in
  *.tar.gz) tar -xzf "$dist/$archive" -C "$x" ;;
  *.zip)
    command -v unzip >/dev/null || die "unzip is required to read $archive"
    unzip -q "$dist/$archive" -d "$x"
    ;;
  esac
  bin=$(find "$x" -type f \( -name kubectl-idx -o -name kubectl-idx.exe \) | head -n1)
  [[ -n "$bin" ]] || die "$archive holds no kubectl-idx binary"
  # "path version" for the main module and every dependency compiled in (a replaced
  # module counts at its replacement, as the binary records it).
  go version -m "$bin" | awk '
    $1 == "mod" {print $2, $3; next}
    $1 == "dep" {if (last != "") print last; last = $2 " " $3; next}
    $1 == "=>" {last = $2 " " $3; next}
    END {if (last != "") print last}
  ' >"$work/modules"
  grep -q "^$module " "$work/modules" || die "go version -m $bin does not name the main module $module"
  ndeps=$(($(wc -l <"$work/modules") - 1))
  ((ndeps > 0)) || die "go version -m $bin lists no dependency"
  # Every package of the SBOM as "name version"; the main module of a snapshot has the
  # version goreleaser stamped or "(devel)", so only its name is compared.
  jq -r '.packages[] | "\(.name) \(.versionInfo // "")"' "$sbom" | sort -u >"$work/sbom-packages"
  missing=$(
    while read -r path version; do
      if [[ $path == "$module" ]]; then
        grep -q "^$path " "$work/sbom-packages" || echo "$path"
      else
        grep -qxF "$path $version" "$work/sbom-packages" || echo "$path $version"
      fi
    done <"$work/modules"
  )
  [[ -z "$missing" ]] || {
    echo "$missing" | indent
    die "$sbom lacks the modules above, which $archive's binary was built with"
  }
  log "ok: $archive.sbom.json lists $module and the $ndeps modules compiled into $archive's binary"
done

# 3. Sign and verify with a throwaway key.
(cd "$work" && run "$work/keys.log" offline "$cosign" generate-key-pair) || die "cosign generate-key-pair"
cp "$dist/checksums.txt" "$work/checksums.txt"
run "$work/sign.log" offline "$cosign" sign-blob --yes --key "$work/cosign.key" --tlog-upload=false \
  --output-signature "$work/checksums.txt.sig" "$work/checksums.txt" || die "cosign sign-blob --key checksums.txt"
verify() {
  offline "$cosign" verify-blob --key "$work/cosign.pub" --signature "$work/checksums.txt.sig" \
    --insecure-ignore-tlog=true "$1"
}
run "$work/verify.log" verify "$work/checksums.txt" || die "cosign verify-blob rejected the checksums.txt it signed"
grep -q "Verified OK" "$work/verify.log" || die "cosign verify-blob did not say Verified OK"
log "ok: checksums.txt signed with a throwaway key verifies (cosign $("$cosign" version 2>/dev/null | awk '$1 == "GitVersion:" {print $2}'))"

# 4. Tampering.
# One hex digit of the first digest changed: 0 becomes 1, anything else 0.
awk 'NR == 1 {c = substr($1, 1, 1); $1 = (c == "0" ? "1" : "0") substr($1, 2)} {print $1 "  " $2}' \
  "$work/checksums.txt" >"$work/tampered.txt"
! cmp -s "$work/checksums.txt" "$work/tampered.txt" || die "the tampered checksums.txt is unchanged"
if verify "$work/tampered.txt" >"$work/tampered.log" 2>&1; then
  indent <"$work/tampered.log"
  die "cosign verify-blob accepted a tampered checksums.txt"
fi
grep -q "invalid signature" "$work/tampered.log" || {
  indent <"$work/tampered.log"
  die "cosign verify-blob failed on the tampered checksums.txt for another reason than its signature"
}
log "ok: a checksums.txt with one digit changed fails cosign verify-blob"
first=$(echo "$archives" | head -n1)
mkdir -p "$work/tampered-dist"
cp "$dist/checksums.txt" "$work/tampered-dist/"
for archive in $archives; do cp "$dist/$archive" "$dist/$archive.sbom.json" "$work/tampered-dist/"; done
printf 'x' >>"$work/tampered-dist/$first"
if (cd "$work/tampered-dist" && sha256sum -c --quiet checksums.txt) >"$work/tampered-sha.log" 2>&1; then
  die "sha256sum -c accepted $first with a byte appended"
fi
log "ok: $first with a byte appended fails sha256sum -c"
