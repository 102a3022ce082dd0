"""The chaos soak (bench/chaos.py) on a small count, as CI runs it: every trial ends with a verdict or a
machine-fault stop, none hangs, the harness stays small and nothing of the trials' sandboxes is left."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO, needs_namespaces

pytestmark = [needs_namespaces, pytest.mark.slow]


# a trial has hung when it outlives its own timeouts (build, agent, verifier: up to ~800 s for a bundled task) and
# a margin; a hang is seen as that, not as pytest's timeout. The soak takes about a minute when nothing hangs.
@pytest.mark.timeout(1800)
def test_a_short_chaos_soak_ends_every_trial_and_leaves_nothing():
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "chaos.py"), "--trials", "8", "--json"],
        capture_output=True, text=True, cwd=REPO, timeout=1700,
    )  # fmt: skip
    summary = json.loads(done.stdout)
    assert done.returncode == 0, (summary, done.stderr[-3000:])
    assert summary["trials"] == 8 and not summary["without_verdict"] and summary["machine_stop"] is None, summary
    assert not any(summary["left_over"].values()) and summary["sandboxes"] >= 8, summary
    assert summary["peak_rss_mb"] < 1024, summary
    assert len(summary["by_behaviour"]) == 8, summary  # eight different behaviours, one a trial
