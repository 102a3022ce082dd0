#!/usr/bin/env bash
# Debian packages the tests use: Chromium for the report screenshot and web tasks,
# LibreOffice to recompute spreadsheet formulas, curl for the web task's sandbox
# (the local backend's `apt-get install curl` only passes where the host has it).
# Skipped when present or not root.
set -uo pipefail
want=()
command -v chromium >/dev/null 2>&1 || want+=(chromium)
command -v soffice >/dev/null 2>&1 || want+=(libreoffice-calc-nogui)
command -v curl >/dev/null 2>&1 || want+=(curl)
[ ${#want[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: missing ${want[*]} (install them with your package manager); tests that need them will be skipped" >&2
  exit 0
fi
echo "system-deps: installing ${want[*]}"
apt-get update -qq >/dev/null 2>&1 || true
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null 2>&1 \
  || echo "system-deps: could not install ${want[*]}; tests that need them will be skipped" >&2
exit 0
