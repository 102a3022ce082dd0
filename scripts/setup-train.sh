#!/usr/bin/env bash
# Create .venv-train: the training environment for the `trl` backend (autoenv/train/hf_worker.py).
#
# Why a second venv: the main .venv is Python 3.12 (Harbor's floor) and torch's 3.12 wheels on PyPI are
# multi-GB CUDA builds; training runs in a Python 3.11 venv that takes the CPU torch wheel where one lies
# on disk (pip's find-links, e.g. /opt/wheels) and PyPI's CUDA build on GPU machines. The main package
# only talks to it through subprocesses (see autoenv/train/trainenv.py).
#
# Idempotent: a stamp of the requirements skips pip when nothing changed.
# Env: AUTOENV_TRAIN_BASE_PYTHON (interpreter to create the venv with, default python3.11),
#      TORCH_SPEC (default torch==2.13.0).
set -euo pipefail
cd "$(dirname "$0")/.."

TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}
REQS=("$TORCH_SPEC" "transformers>=5.13,<6" "tokenizers>=0.21" "safetensors>=0.4" "pydantic>=2.6" "trl>=1.16,<2")
VENV=.venv-train
STAMP=$VENV/.autoenv-train-requirements

find_python() {
  for candidate in ${AUTOENV_TRAIN_BASE_PYTHON:-} python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 \
      && "$candidate" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  [ -n "${AUTOENV_TRAIN_BASE_PYTHON:-}" ] && { echo "$AUTOENV_TRAIN_BASE_PYTHON"; return 0; }
  return 1
}

if [ ! -x $VENV/bin/python ]; then
  py=$(find_python) || { echo "setup-train: need Python 3.11 (the CPU torch wheel is cp311); set AUTOENV_TRAIN_BASE_PYTHON to use another" >&2; exit 1; }
  echo "creating $VENV with $py"
  "$py" -m venv $VENV
fi

wanted="$(printf '%s\n' "${REQS[@]}")"
check='import torch, transformers, tokenizers, safetensors, pydantic, trl, autoenv.train.hf_worker'
if [ -f $STAMP ] && [ "$(cat $STAMP)" = "$wanted" ] && $VENV/bin/python -c "$check" 2>/dev/null; then
  echo "$VENV is up to date (torch $($VENV/bin/python -c 'import torch; print(torch.__version__)'))"
  exit 0
fi

quiet() { grep -v -e "^WARNING: Location" -e "is ignored: it is neither" || true; }
$VENV/bin/python -m pip install -q "${REQS[@]}" 2>&1 | quiet
# autoenv itself: code only (its own deps are the 3.12 flywheel's, which training does not need)
$VENV/bin/python -m pip install -q --no-deps --ignore-requires-python -e . 2>&1 | quiet
$VENV/bin/python -c "$check" || { echo "setup-train: installation failed" >&2; exit 1; }
echo "$wanted" > $STAMP
$VENV/bin/python -c 'import sys, torch, transformers, trl; print(sys.prefix, "torch", torch.__version__, "cuda", torch.cuda.is_available(), "transformers", transformers.__version__, "trl", trl.__version__)'
