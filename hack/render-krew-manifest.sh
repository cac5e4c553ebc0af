#!/usr/bin/env bash
# Renders the krew manifest template (plugins/krew.yaml) for one release: every
# {{VERSION}} becomes the release tag and each platform's {{SHA256}} becomes the
# sha256 of the archive its uri names, read from the local dist directory.
#
#   hack/render-krew-manifest.sh --version v1.2.3 [--dist dist] [--template plugins/krew.yaml]
#                                [--out dist/krew/idx.yaml] [--available-only]
#
# A release must cover every platform, so by default a missing archive is an error.
# --available-only drops the platforms whose archive is not in --dist instead, for
# checking a host-only snapshot build.
set -euo pipefail

version="" dist=dist template=plugins/krew.yaml out=dist/krew/idx.yaml available_only=0
die() {
  echo "render-krew-manifest: $*" >&2
  exit 1
}
while (($# > 0)); do
  case $1 in
  --version) version=${2-}; shift 2 || die "--version needs a value" ;;
  --dist) dist=${2-}; shift 2 || die "--dist needs a value" ;;
  --template) template=${2-}; shift 2 || die "--template needs a value" ;;
  --out) out=${2-}; shift 2 || die "--out needs a value" ;;
  --available-only) available_only=1; shift ;;
  *) die "unknown argument \"$1\"" ;;
  esac
done

# krew compares versions as semver and wants the leading v.
semver='^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$'
[[ -n "$version" ]] || die "--version is required (e.g. --version v1.2.3)"
[[ "$version" =~ $semver ]] || die "version \"$version\" is not a semver tag like v1.2.3"
[[ -f "$template" ]] || die "template $template does not exist"
[[ -d "$dist" ]] || die "dist directory $dist does not exist (build the archives first: make snapshot)"

if command -v sha256sum >/dev/null; then
  sha256() { sha256sum "$1" | cut -d' ' -f1; }
else
  sha256() { shasum -a 256 "$1" | cut -d' ' -f1; } # macOS
fi

# One "name digest" line per archive present in dist.
digests=$(mktemp)
rendered=$(mktemp)
trap 'rm -f "$digests" "$rendered"' EXIT
shopt -s nullglob
for archive in "$dist"/*.tar.gz "$dist"/*.zip; do
  echo "$(basename "$archive") $(sha256 "$archive")" >>"$digests"
done

# The template's platforms are a list at the end of spec; each item starts with
# "  - " and names its archive as the last path element of its uri. Items are
# buffered so one whose archive is missing can be dropped or reported whole.
awk -v version="$version" -v available_only="$available_only" -v dist="$dist" '
  function flush(   i, line) {
    if (n == 0) return
    if (archive == "") { print "platform without uri in template" > "/dev/stderr"; bad = 1 }
    else if (!(archive in sha)) { if (!available_only) missing = missing (missing ? ", " : "") archive }
    else {
      kept++
      for (i = 1; i <= n; i++) { line = block[i]; gsub(/\{\{SHA256\}\}/, sha[archive], line); print line }
    }
    n = 0; archive = ""
  }
  FILENAME == ARGV[1] { sha[$1] = $2; next } # not NR == FNR: the digests may be empty
  # The template'"'"'s own comments describe the template, not the rendered file.
  FNR == 1 { print "# Rendered from plugins/krew.yaml by hack/render-krew-manifest.sh; do not edit." }
  /^#/ { next }
  { gsub(/\{\{VERSION\}\}/, version) }
  /^  platforms:/ { in_platforms = 1; print; next }
  in_platforms && /^  - / { flush(); block[++n] = $0; next }
  in_platforms && n > 0 && /^    / { block[n + 1] = $0; n++; if ($1 == "uri:") { archive = $2; sub(/.*\//, "", archive) } ; next }
  in_platforms && n > 0 { flush(); in_platforms = 0 }
  { print }
  END {
    flush()
    if (bad) exit 1
    if (missing != "") { printf "render-krew-manifest: missing archives in %s: %s (build them with make snapshot, or pass --available-only)\n", dist, missing > "/dev/stderr"; exit 1 }
    if (kept == 0) { printf "render-krew-manifest: no archive named in %s is in %s\n", FILENAME, dist > "/dev/stderr"; exit 1 }
  }
' "$digests" "$template" >"$rendered" || exit 1

if grep -n '{{' "$rendered" >&2; then
  die "placeholders left unrendered in $out (see above)"
fi
mkdir -p "$(dirname "$out")"
mv "$rendered" "$out"
echo "render-krew-manifest: wrote $out for $version ($(grep -c '^    uri:' "$out") platforms)" >&2
