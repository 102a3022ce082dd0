#!/usr/bin/env bash
# Debian packages autoenv and its tests use, installed where missing (root only).
#   local backend: the packages in autoenv/sandbox/local/debian-packages.tsv, the one list that `autoenv doctor`
#     checks too (buildah, runc, netavark + iptables for the build network, slirp4netns, mmdebstrap, ...);
#     each line says why the backend needs it
#   tests: chromium (report screenshot, web task), libreoffice-calc-nogui (spreadsheet recalculation), curl
# Usage: system-deps.sh [backend | --list]; --list prints the backend's packages, one a line, and installs nothing. Without root, it says what is missing; `autoenv doctor` then names each missing
# program, and tests that need it are skipped with that reason. A package that cannot be installed fails the script
# (exit 1) when it is one the backend requires: a machine that cannot build images must not look ready.
set -uo pipefail
cd "$(dirname "$0")/.."
LIST=autoenv/sandbox/local/debian-packages.tsv
if [ "${1:-}" = --list ]; then awk -F'\t' '!/^#/ && NF {print $1}' "$LIST"; exit 0; fi
backend=()
required=()
tools=()
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
while IFS=$'\t' read -r pkg _program need _why; do
  case "$pkg" in ''|'#'*) continue ;; esac
  installed "$pkg" || { backend+=("$pkg"); [ "$need" = required ] && required+=("$pkg"); }
done < "$LIST"
# `system-deps.sh backend`: only what the local backend needs (the main job); no argument: the tests' tools too
if [ "${1:-all}" != backend ]; then
  for pkg in chromium libreoffice-calc-nogui curl; do
    installed "$pkg" || tools+=("$pkg")
  done
fi
want=("${backend[@]}" "${tools[@]}")
[ ${#want[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: missing ${want[*]} (install them with your package manager); \`autoenv doctor\` says what each is for" >&2
  exit 0
fi
echo "system-deps: installing ${want[*]}"
apt-get update -qq >/dev/null 2>&1 || true
if [ ${#backend[@]} -gt 0 ]; then
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${backend[@]}" >/tmp/autoenv-system-deps.log 2>&1; then
    still=()
    for pkg in "${required[@]}"; do installed "$pkg" || still+=("$pkg"); done
    if [ ${#still[@]} -gt 0 ]; then
      echo "system-deps: could not install ${still[*]}, which the local backend needs (apt's output: /tmp/autoenv-system-deps.log)" >&2
      exit 1
    fi
    echo "system-deps: could not install the optional ${backend[*]}" >&2
  fi
fi
if [ ${#tools[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${tools[@]}" >/dev/null 2>&1 \
    || echo "system-deps: could not install ${tools[*]}; tests that need them will be skipped" >&2
fi
exit 0
