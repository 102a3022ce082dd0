#!/usr/bin/env bash
# Debian packages autoenv and its tests use, installed where missing (root only).
#   local backend: buildah (daemonless image builds; brings containers-common with Docker's
#     default seccomp profile), runc (the OCI runtime), runsc (gVisor, optional stronger
#     isolation), mmdebstrap (stand-in base images where no registry answers), slirp4netns
#     (outbound network for sandboxes without reaching the host's loopback)
#   tests: chromium (report screenshot, web task), libreoffice-calc-nogui (spreadsheet
#     recalculation), curl
# Usage: system-deps.sh [backend]. Without root, it says what is missing; tests that need it are skipped with that reason.
set -uo pipefail
backend=()  # installed with their recommends (buildah's build network: netavark, aardvark-dns)
tools=()
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
for pkg in buildah runc runsc mmdebstrap slirp4netns netavark golang-github-containers-common; do
  installed "$pkg" || backend+=("$pkg")
done
# `system-deps.sh backend`: only what the local backend needs (the main job); no argument: the tests' tools too
if [ "${1:-all}" != backend ]; then
  for pkg in chromium libreoffice-calc-nogui curl; do
    installed "$pkg" || tools+=("$pkg")
  done
fi
want=("${backend[@]}" "${tools[@]}")
[ ${#want[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: missing ${want[*]} (install them with your package manager); tests that need them will be skipped" >&2
  exit 0
fi
echo "system-deps: installing ${want[*]}"
apt-get update -qq >/dev/null 2>&1 || true
if [ ${#backend[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${backend[@]}" >/dev/null 2>&1 \
    || echo "system-deps: could not install ${backend[*]}; the local backend's tests will be skipped" >&2
fi
if [ ${#tools[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${tools[@]}" >/dev/null 2>&1 \
    || echo "system-deps: could not install ${tools[*]}; tests that need them will be skipped" >&2
fi
exit 0
