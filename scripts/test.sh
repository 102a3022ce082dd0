#!/usr/bin/env bash
# The project's test command (README, CI): install what the tests need, run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/system-deps.sh
bash scripts/docker-setup.sh
bash scripts/setup-train.sh || echo "setup-train: training venv unavailable; the trl trainer test will be skipped" >&2
exec .venv/bin/python -m pytest -q -rs "$@"
