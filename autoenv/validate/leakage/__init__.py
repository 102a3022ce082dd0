"""Does the agent get to see what it is supposed to produce?

A task leaks when its environment ships the reference solution or the tests
(the agent can copy or game them), or when its instruction already states the
answers the tests expect. Both make a task trivially solvable without the
skill it is meant to train, and an RL policy finds such shortcuts quickly.

Detection is by content, not by guessing intent:

* *image*: every file the Dockerfile added is compared with the task's
  ``solution/`` and ``tests/`` files. A file that contains **all** the
  distinctive lines of one of them is a copy (a starter file that shares most
  lines with a bug-fix solution lacks the fixed lines, so it is not flagged).
  Test programs are also found by name (``test_*.py`` …), anything under
  ``/tests`` or ``/solution`` is flagged outright, and test data files whose
  names say they are answers (``expected*``, ``*labels*`` …) by content.
* *instruction*: the literal values the tests compare outputs against
  (``== 4821``, ``approx(3.1416)``, ``[ "$x" = "4821" ]``, rows of an
  ``expected_*.csv``) must not appear in ``instruction.md``, unless they are
  in the environment's own input files too (then they are data the agent is
  meant to read, not answers). Bare words are not answers: "write hello to
  out.txt" is a specification. Nor may the instruction contain most of the
  solution's code.

On the local backend the image is the built image's root filesystem (mounted read-only by buildah).
Other backends are scanned from inside a started environment by
:class:`autoenv.agents.scan.ScanAgent`, which tars the usual work directories back to the host.

By what it reads: :mod:`.literals` (the task's own files: what the tests compare with, the solution's lines),
:mod:`.instruction` (instruction.md), :mod:`.image` (the files the agent starts with).
"""

from __future__ import annotations

from autoenv.agents.scan import ScanAgent
from autoenv.validate.leakage.image import (
    EXTRACTED_SKIP,
    PACKAGE_DIRS,
    SKIP_DIRS,
    extracted_root,
    input_paths,
    scan_expected_values,
    scan_extracted,
    scan_tree,
)
from autoenv.validate.leakage.instruction import (
    LEAK_SHARE,
    number_in_words,
    scan_instruction,
    scan_outputs_in_instruction,
)
from autoenv.validate.leakage.literals import (
    LeakFinding,
    Secrets,
    python_answer_literals,
    read_text,
    shell_answer_literals,
    task_secrets,
)

__all__ = [
    "EXTRACTED_SKIP",
    "LEAK_SHARE",
    "SKIP_DIRS",
    "PACKAGE_DIRS",
    "LeakFinding",
    "ScanAgent",
    "Secrets",
    "extracted_root",
    "input_paths",
    "number_in_words",
    "python_answer_literals",
    "read_text",
    "scan_expected_values",
    "scan_extracted",
    "scan_instruction",
    "scan_outputs_in_instruction",
    "scan_tree",
    "shell_answer_literals",
    "task_secrets",
]
