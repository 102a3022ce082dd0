#!/usr/bin/env bash
# The project's test command (README, CI): install what the tests need, run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/system-deps.sh
bash scripts/docker-setup.sh
bash scripts/setup-train.sh || echo "setup-train: training venv unavailable; the trl trainer test will be skipped" >&2
# the lint gate first (pyproject.toml [tool.ruff]): a finding or an unformatted file fails the run in seconds
.venv/bin/ruff check autoenv tests bench scripts
.venv/bin/ruff format --check autoenv tests bench scripts
echo "test.sh: installs and the lint gate took ${SECONDS} s" >&2
# one pytest worker per core (pytest-xdist), a test file at a time per worker so that a file's module-scoped
# fixtures are made once; files are handed out in the order tests/conftest.py sorts them (heaviest first), not
# xdist's own (most tests first), so that the workers end together. AUTOENV_TEST_WORKERS=0 runs in one process.
# The 25 slowest tests are printed at the end: where CI time goes, without a timed test.
# A worker that dies (a signal, not a failed test) ends the run as a failure naming the test it ran: xdist's
# default restarts it, and with --dist loadfile the restarted worker can wait forever for work (a CI run hung so
# on 2026-12-07 at 866 of 886, both workers idle).
exec .venv/bin/python -m pytest -q -rs --durations=25 -n "${AUTOENV_TEST_WORKERS:-logical}" --dist loadfile \
  --no-loadscope-reorder --max-worker-restart=0 "$@"
