#!/usr/bin/env bash
# Install autoenv and run the main job offline: a short flywheel on the bundled
# tasks and seed cases with the scripted policies, then write the report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/system-deps.sh backend
# the offline learned policy (a preference table the `table` trainer updates from the verifiers' rewards) as
# proposer and solver, so the loop's training changes what the next step does
.venv/bin/autoenv flywheel --steps "${STEPS:-3}" --db runs/flywheel.db --out runs/flywheel \
  --solver terminal:policy=learned --trainer table "$@"
.venv/bin/autoenv report --db runs/flywheel.db --out runs/report
