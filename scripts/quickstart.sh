#!/usr/bin/env bash
# Install autoenv and run the main job offline: a short flywheel on the bundled
# tasks and seed cases with the scripted policies, then write the report.
# It fails (non-zero) when the machine cannot run the local backend (`autoenv doctor` says what to install) and
# when the run accepted no task: a main job that did nothing never exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/system-deps.sh backend
# every prerequisite of the local backend, checked by using it (stand-ins, a RUN step, two sandboxes)
.venv/bin/autoenv doctor || { echo "quickstart: this machine cannot run the local backend; fix what \`autoenv doctor\` names above" >&2; exit 1; }
# the offline learned policy (a preference table the `table` trainer updates from the verifiers' rewards) as
# proposer and solver, so the loop's training changes what the next step does
.venv/bin/autoenv flywheel --steps "${STEPS:-3}" --db runs/flywheel.db --out runs/flywheel \
  --solver terminal:policy=learned --trainer table --min-accepted 1 "$@"
.venv/bin/autoenv report --db runs/flywheel.db --out runs/report
