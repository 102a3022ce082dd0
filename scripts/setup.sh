#!/usr/bin/env bash
# Create .venv with Python >= 3.12 (Harbor's floor) and install autoenv with its test extras.
# Idempotent: re-running only installs what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

find_python() {
  for candidate in python3.12 python3.13 python3; do
    for pin in "" 3.12.1 3.13.1; do
      if command -v "$candidate" >/dev/null 2>&1; then
        if PYENV_VERSION=${pin:-${PYENV_VERSION:-}} "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; then
          echo "$candidate ${pin}"
          return 0
        fi
      fi
    done
  done
  # pyenv installs that the shims don't expose without a version pin
  for dir in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[23]*; do
    [ -x "$dir/bin/python3" ] && { echo "$dir/bin/python3 "; return 0; }
  done
  return 1
}

if [ ! -x .venv/bin/python ]; then
  read -r py pin < <(find_python) || { echo "autoenv needs Python >= 3.12 (Harbor requires it); install python3.12 and retry" >&2; exit 1; }
  echo "creating .venv with $py ${pin:+(PYENV_VERSION=$pin)}"
  PYENV_VERSION=${pin:-${PYENV_VERSION:-}} "$py" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -m pip install -q -e '.[test]' 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/python -c 'import autoenv, harbor' || { echo "installation failed" >&2; exit 1; }
# an editable install leaves autoenv's own modules uncompiled, and where PYTHONDONTWRITEBYTECODE is set (this
# kind of machine sets it) every `autoenv` process compiled them again from source: about half a second of CPU a
# command, which the flywheel and the tests pay hundreds of times. Compiled once here, as pip does for packages.
.venv/bin/python -m compileall -q -j 0 autoenv > /dev/null
