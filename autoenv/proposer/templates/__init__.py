"""Task families for the scripted proposer: each turns (seed case, rng) into a complete Harbor task.

A seed case picks its family by ``SeedCase.family`` or, failing that, by
keywords in its target skill, failure mode and task summary. Every family
randomises data, the bug or target, names and the exact specification, so
two drafts from the same seed case are different tasks.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from autoenv.agents.policies.recipes import Recipe
from autoenv.proposer.models import SeedCase
from autoenv.proposer.templates import bugfix, config, csvstat, logparse, mlp, primer, shell, textclf
from autoenv.proposer.templates.base import FLAWS, TaskDraft, apply_flaw, seed_words


@dataclass
class Family:
    name: str
    description: str
    keywords: tuple[str, ...]
    generate: Callable[..., TaskDraft]  # (case, rng[, level=...]) -> TaskDraft
    recipe: Recipe | None = None
    #: Graded difficulty the generator takes as ``level=`` (empty: one level); ``default_level`` is used without a choice.
    levels: tuple[int, ...] = ()
    default_level: int | None = None

    def draft(self, case: SeedCase, rng: random.Random, level: int | None = None) -> TaskDraft:
        if not self.levels:
            return self.generate(case, rng)
        return self.generate(case, rng, level=level if level is not None else self.default_level)


FAMILIES: dict[str, Family] = {
    "bugfix": Family(
        "bugfix", "fix a buggy helper function so a report prints the right numbers",
        ("bug", "fix", "median", "debug", "function", "off-by-one", "regression", "unit test"),
        bugfix.generate, None,  # solved by the scripted policy's own fix_function recipe
    ),
    "csv-stat": Family(
        "csv-stat", "grouped statistic over messy CSV rows, to a tolerance",
        ("csv", "statistic", "mean", "weighted", "aggregate", "tolerance", "data cleaning", "spreadsheet"),
        csvstat.generate, csvstat.CsvStatRecipe(), csvstat.LEVELS, csvstat.DEFAULT_LEVEL,
    ),
    "log-parse": Family(
        "log-parse", "summarise a service log with malformed lines into JSON",
        ("log", "parse", "regex", "malformed", "access log", "grep", "json report"),
        logparse.generate, logparse.LogSummaryRecipe(),
    ),
    "config-repair": Family(
        "config-repair", "repair a hand-edited INI file so the launcher accepts it, keeping intended values",
        ("config", "ini", "configuration", "repair", "settings", "launcher", "yaml", "toml"),
        config.generate, config.ConfigRepairRecipe(),
    ),
    "text-classification": Family(
        "text-classification", "train a standard-library text classifier to an accuracy target within a time budget",
        ("classif", "accuracy", "fasttext", "spam", "sentiment", "model", "train", "nlp", "timeout", "timed out"),
        textclf.generate, None,  # solved by the scripted policy's own text_classifier recipe
    ),
    "primer-tm": Family(
        "primer-tm", "melting temperatures and GC content of PCR primers, with or without Python",
        ("primer", "melting", "tm", "pcr", "dna", "bioinformatics", "gc content", "awk", "no python"),
        primer.generate, primer.PrimerTmRecipe(),
    ),
    "mlp-rebuild": Family(
        "mlp-rebuild", "re-implement a small neural network's forward pass from exported weights",
        ("weights", "neural", "mlp", "forward pass", "rebuild", "model", "inference", "torch", "pytorch"),
        mlp.generate, mlp.MlpRebuildRecipe(),
    ),
    "shell-script": Family(
        "shell-script", "a bash tool over a directory tree, tested on fresh trees",
        ("shell", "bash", "script", "find", "files", "directory", "backup", "rotation", "posix"),
        shell.generate, shell.TallyRecipe(),
    ),
}


def family_for(case: SeedCase) -> Family:
    """The family a seed case asks for: its ``family`` field, else the best keyword match."""
    if case.family:
        if case.family not in FAMILIES:
            raise ValueError(f"seed case {case.id}: unknown family {case.family!r}; known: {', '.join(sorted(FAMILIES))}")
        return FAMILIES[case.family]
    words = seed_words(case)
    scored = sorted(((sum(words.count(k) for k in f.keywords), i, f) for i, f in enumerate(FAMILIES.values())), key=lambda t: (-t[0], t[1]))
    return scored[0][2]


__all__ = ["FAMILIES", "FLAWS", "Family", "TaskDraft", "apply_flaw", "family_for"]


def _add_office_families() -> None:
    """The office/web families (autoenv.proposer.office) plug in through their own adapter."""
    try:
        from autoenv.proposer.office import template_families
    except Exception:  # optional dependencies (openpyxl, python-docx) or a module being rewritten
        return
    for family in template_families():
        FAMILIES.setdefault(family.name, family)


_add_office_families()
