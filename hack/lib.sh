# Sourced by the hack/ test scripts: log, indent, die and run, each line they
# write prefixed with the name of the script that sourced it.
script_name=$(basename "${BASH_SOURCE[1]}" .sh)
log() { echo "$script_name: $*" >&2; }
# indent shows a failing command's output before the FAIL line.
indent() { sed 's/^/    /' >&2; }
die() {
  log "FAIL: $*"
  exit 1
}

# run LOG CMD... runs CMD with its output in LOG, printing LOG if CMD fails.
run() {
  local out=$1
  shift
  if ! "$@" >"$out" 2>&1; then
    indent <"$out"
    return 1
  fi
}
