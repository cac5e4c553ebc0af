# Sourced by the hack/ test scripts: log, indent and die, each line prefixed
# with the name of the script that sourced it.
script_name=$(basename "${BASH_SOURCE[1]}" .sh)
log() { echo "$script_name: $*" >&2; }
# indent shows a failing command's output before the FAIL line.
indent() { sed 's/^/    /' >&2; }
die() {
  log "FAIL: $*"
  exit 1
}
