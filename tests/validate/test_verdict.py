"""The three verdicts (issue 40/41), the shortcut cheats' scripts and the static read of the tests, without trials.

The verdict rules are pure functions of check results; the cheats are shell scripts run here for real on files in
a temporary folder; the reads are parsed from real test sources.
"""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime

from autoenv.agents.adversary import cheat_script
from autoenv.agents.shortcuts import examples, folders, minimal_content, output_files, positive_word
from autoenv.validate.audit import AuditEntry, AuditReport
from autoenv.validate.checks import CheckResult
from autoenv.validate.checks.reads import python_reads, shell_reads
from autoenv.validate.validation import ValidationReport, ValidationSettings
from autoenv.validate.verdict import cannot_judge, decide, reasons
from autoenv.vocab import Undecided, Verdict

NONE = frozenset({"oracle", "deterministic", "partial", "timeouts", "probes"})


def ok(name: str) -> CheckResult:
    return CheckResult(name=name, passed=True, summary="ok")


def not_run(name: str) -> CheckResult:
    return CheckResult(name=name, passed=None, summary="not run: oracle not checked")


def test_a_solved_task_with_every_check_passing_is_valid():
    assert decide([ok("build"), ok("oracle"), ok("tamper")], frozenset()) is Verdict.VALID


def test_no_solution_is_undetermined_never_valid():
    checks = [ok("build"), not_run("oracle"), ok("tamper")]
    assert decide(checks, NONE) is Verdict.UNDETERMINED
    assert [u.kind for u in reasons(checks)] == [Undecided.NO_SOLUTION]
    failed = CheckResult(name="tamper", passed=False, summary="a cheating agent got reward 1")
    assert decide([ok("build"), not_run("oracle"), failed], NONE) is Verdict.INVALID


def test_a_stand_in_base_missing_a_program_cannot_be_judged_here():
    oracle = CheckResult(
        name="oracle",
        passed=False,
        summary="reference solution failed 2/2 runs: file not found on a stand-in base",
        evidence={"missing_programs": ["file"], "stand_ins": ["ubuntu:24.04 -> debian:bookworm-slim"]},
    )
    assert decide([ok("build"), oracle], frozenset()) is Verdict.UNDETERMINED
    (why,) = reasons([ok("build"), oracle])
    assert why.kind is Undecided.CANNOT_JUDGE and "`" not in why.reason and "file" in why.reason
    assert "--env docker" in why.decide
    # the same missing program on the real base is the task's flaw
    real = oracle.model_copy(update={"evidence": {"missing_programs": ["file"], "stand_ins": []}})
    assert cannot_judge(real) is None and decide([ok("build"), real], frozenset()) is Verdict.INVALID
    # and a flaw found besides it decides the task
    tamper = CheckResult(name="tamper", passed=False, summary="x")
    assert decide([ok("build"), oracle, tamper], frozenset()) is Verdict.INVALID


def test_network_off_here_and_unreachable_packages_cannot_be_judged_here():
    run = {"verifier_output": "curl: (6) Could not resolve host: api.example.com"}
    oracle = CheckResult(name="oracle", passed=False, summary="failed", evidence={"runs": [run]})
    assert cannot_judge(oracle).kind is Undecided.CANNOT_JUDGE
    # a task that declares no network and needs it is flawed (the oracle check records the network failure then)
    offline = oracle.model_copy(update={"evidence": {"runs": [run], "network_failure": run["verifier_output"]}})
    assert cannot_judge(offline) is None
    build = CheckResult(
        name="build", passed=False, summary="failed", evidence={"error": "E: Failed to fetch http://deb.debian.org/x"}
    )
    assert "package" in cannot_judge(build).reason
    broken = CheckResult(name="build", passed=False, summary="failed", evidence={"error": "COPY failed: no such file"})
    assert cannot_judge(broken) is None


def _report(**fields) -> dict:
    return {
        "task": "/t",
        "task_name": "t",
        "content_hash": "h",
        "settings": ValidationSettings().model_dump(),
        "checks": [ok("oracle").model_dump()],
        "started_at": datetime.now(UTC).isoformat(),
        "duration_sec": 1.0,
        **fields,
    }


def test_reports_recorded_before_the_third_verdict_still_read():
    assert ValidationReport.model_validate(_report(valid=True)).verdict is Verdict.VALID
    old = ValidationReport.model_validate(_report(valid=False))
    assert old.verdict is Verdict.INVALID and old.undetermined == []
    assert AuditEntry.model_validate({"task": "/t", "task_name": "t", "valid": True}).verdict is Verdict.VALID


def test_undetermined_is_trained_on_only_when_asked_for():
    report = ValidationReport.model_validate(_report(valid=False, verdict="undetermined"))
    assert not report.trainable() and report.trainable(accept_undetermined=True)
    assert not ValidationReport.model_validate(_report(valid=False)).trainable(accept_undetermined=True)


def test_the_audit_counts_valid_invalid_and_undetermined():
    def entry(name, verdict, kind=None):
        why = [{"kind": kind, "reason": "r", "decide": "d"}] if kind else []
        return AuditEntry(task=name, task_name=name, valid=verdict == "valid", verdict=verdict, undetermined=why)

    audit = AuditReport(
        dataset="d",
        env="local",
        started_at=datetime.now(UTC),
        duration_sec=1.0,
        entries=[
            entry("a", "valid"),
            entry("b", "invalid"),
            entry("c", "undetermined", "no-solution"),
            entry("d", "undetermined", "no-solution"),
            entry("e", "undetermined", "cannot-judge-here"),
        ],
    )
    s = audit.summary()
    assert (s["valid"], s["invalid"], s["undetermined"]) == (1, 1, 3)
    assert s["undetermined_by_reason"] == {"no-solution": 2, "cannot-judge-here": 1}
    assert [e.task_name for e in audit.worst()] == ["b"]


INSTRUCTION = """Summarize `{d}/events.csv` into `{d}/summary.json`, for example:

```json
{{"total_events": 120, "status": "ok", "ok": false, "users": ["ann"]}}
```

`status` is one of `ok`, `warn` or `error`. Write one line per file, `name: VALID` or `name: INVALID`, to
`{d}/report.txt`, and a repaired copy of each bad file into the folder `{d}/repaired/`.
"""


def _run(script: str) -> list[str]:
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30, check=True).stdout
    return [line.split(" ", 2)[1] for line in out.splitlines() if line.startswith("CHEAT ")]


def test_the_instruction_is_read_for_outputs_examples_and_folders(tmp_path):
    text = INSTRUCTION.format(d=tmp_path)
    assert output_files(text) == [f"{tmp_path}/events.csv", f"{tmp_path}/summary.json", f"{tmp_path}/report.txt"]
    assert json.loads(examples(text)[f"{tmp_path}/summary.json"])["total_events"] == 120
    assert folders(text) == [f"{tmp_path}/repaired"]
    assert positive_word(text) == "VALID"
    assert minimal_content("/x/a.csv", "id,amount\n1,2\n", []) == "id,amount\n"


def test_each_shortcut_writes_its_outputs_for_real(tmp_path):
    text = INSTRUCTION.format(d=tmp_path)
    (tmp_path / "events.csv").write_text("user,event\nann,login\n")
    assert _run(cheat_script(text, ("example",))) == ["example_output"]
    assert json.loads((tmp_path / "summary.json").read_text())["total_events"] == 120
    (tmp_path / "summary.json").unlink()
    assert set(_run(cheat_script(text, ("minimal",)))) == {"minimal_output", "empty_folder"}
    minimal = json.loads((tmp_path / "summary.json").read_text())
    assert minimal == {"total_events": 0, "status": "ok", "ok": False, "users": []}
    assert (tmp_path / "repaired").is_dir() and not any((tmp_path / "repaired").iterdir())
    for name in ("summary.json", "report.txt"):
        (tmp_path / name).unlink()
    assert set(_run(cheat_script(text, ("positive",)))) == {"positive_report"}
    assert json.loads((tmp_path / "summary.json").read_text())["ok"] is True
    assert (tmp_path / "report.txt").read_text() == "VALID\n"
    for name in ("summary.json", "report.txt"):
        (tmp_path / name).unlink()
    (tmp_path / "repaired" / "a.ini").write_text("x")
    kinds = _run(cheat_script(text, ("inputs",), (f"{tmp_path}/hidden.json",)))
    assert {"emptied_input", "emptied_folder", "minimal_output"} <= set(kinds)
    assert (tmp_path / "events.csv").read_text() == "user,event\n"  # a CSV keeps its header
    assert not any((tmp_path / "repaired").iterdir())


def test_the_tests_reads_are_found_with_their_lines():
    source = 'import csv\nfrom pathlib import Path\nDATA = "/data/in.csv"\n\n\ndef test_x():\n'
    source += '    rows = list(csv.reader(open(DATA)))\n    out = Path("/app/out.json").read_text()\n'
    source += '    open("/app/scratch.txt", "w").write("x")\n'
    assert python_reads(source) == [("/data/in.csv", 7), ("/app/out.json", 8)]
    script = "want=$(grep -ci rose /app/poem.txt)\necho 1 > /app/made.txt\ncat /app/made.txt\njq .x < /app/a.json\n"
    assert shell_reads(script) == [("/app/poem.txt", 1), ("/app/a.json", 4)]


def test_the_keyword_shortcut_writes_a_diagnosis_only_where_prose_is_asked_for(tmp_path):
    """``keywords``: a diagnosis naming every common cause, for an instruction that asks for one in a text file; none
    for an instruction whose text output is a value (a number, a word), which a soup of causes could never pass."""
    asks = f"`/app/x.py` crashes on an empty file. Find out why and write your diagnosis to `{tmp_path}/diagnosis.txt`."
    assert _run(cheat_script(asks, ("keywords",))) == ["keyword_soup"]
    text = (tmp_path / "diagnosis.txt").read_text()
    assert "race condition" in text and "lock" in text and "division by zero" in text and "off-by-one" in text
    value = f"Count the lines of /data/in.csv and write the number to `{tmp_path}/count.txt`."
    assert cheat_script(value, ("keywords",)) == cheat_script(value, ())
