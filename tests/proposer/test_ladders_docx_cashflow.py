"""The ladders of docx-formatting and cashflow-memo (issue 42), checked without a sandbox.

test_ladders.py validates the top level in a sandbox (oracle, nop, partial, tamper) and has the scripted solver
solve it. Here, fast: level 1 is the task of earlier releases byte for byte, each level is a skill of its own, the
unseen inputs of levels 3 and 4 really hold the corners their guide words (and the shipped inputs do not), the
reference program meets the tests' expectations on them and a program missing any one rule fails them.
"""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
from pathlib import Path

import docx
import pytest

from autoenv.agents.policies.recipes import match_recipe
from autoenv.families.docx_formatting import ladder as docx_ladder
from autoenv.families.docx_formatting.docx_format import char_formats, spans_to_mask
from autoenv.families.registry import FAMILIES
from autoenv.proposer.models import SeedCase

OURS = ("docx-formatting", "cashflow-memo")
#: sha256 (first 16 hex digits) of the level-1 tasks of seeds 0-7, as the generators wrote them before the ladders
LEVEL_ONE_DIGEST = {"docx-formatting": "859d4050789f679c", "cashflow-memo": "a540c88babb18c85"}


def case_for(family: str) -> SeedCase:
    return SeedCase(id=f"t-{family}", task="t", failure_mode="t", target_skill="t", family=family)


def draft(family: str, level: int, seed: int):
    return FAMILIES[family].draft(case_for(family), random.Random(seed), level=level)


def embedded_case(tests: str) -> dict:
    """The CASE literal of a generated test file."""
    literal = tests.split("CASE: dict = ", 1)[1].split("\n\n", 1)[0]
    return eval(literal)  # noqa: S307 - our own generator's text


def program_task(family: str, level: int, tmp_path: Path, key: str, shipped: str) -> tuple:
    """A level-3/4 task on disk (seed 11): its draft, its tests folder and its expectations per input (``key`` of
    the tests' CASE), whose shipped input is the task's own ``shipped`` file."""
    d = draft(family, level, 11)
    task = d.write(tmp_path / "task")
    expected = embedded_case(d.files["tests/test_outputs.py"])[key]
    ours = sorted(name for name in expected if name.startswith(("hidden-", "unseen-")))
    assert len(ours) == 3 and len(expected) == 4
    suffix = Path(shipped).suffix
    assert (task / "tests" / f"shipped{suffix}").read_bytes() == (task / "environment" / "app" / shipped).read_bytes()
    return d, task / "tests", expected


@pytest.mark.parametrize("family", OURS)
def test_level_one_is_the_task_of_earlier_releases_byte_for_byte(family):
    case = SeedCase(id="t", task="t", failure_mode="t", target_skill="t", family=family)
    digest = hashlib.sha256()
    for seed in range(8):
        plain = FAMILIES[family].generate(case, random.Random(seed))
        files = {rel: text if isinstance(text, str) else text.hex() for rel, text in sorted(plain.files.items())}
        digest.update(json.dumps(files).encode())
        digest.update(plain.name.encode())
    assert digest.hexdigest()[:16] == LEVEL_ONE_DIGEST[family]


@pytest.mark.parametrize("family", OURS)
def test_four_levels_each_a_skill_of_its_own(family):
    assert FAMILIES[family].levels == (1, 2, 3, 4) and FAMILIES[family].default_level == 1
    skills = set()
    for level in (1, 2, 3, 4):
        instruction = draft(family, level, level).files["instruction.md"]
        recipe, _ = match_recipe(instruction)
        assert recipe is FAMILIES[family].recipe
        skill = recipe.difficulty(instruction)
        assert skill == (None if level == 1 else FAMILIES[family].level(level).skill())
        skills.add(skill)
    assert len(skills) == 4


# -- docx-formatting ------------------------------------------------------------------------


def wrong_blocks(document, want: list[dict]) -> list[str]:
    """What differs between a formatted document and the tests' expectation (empty: it meets it)."""
    got = docx_ladder.iter_blocks(document)
    if len(got) != len(want):
        return [f"{len(got)} blocks, expected {len(want)}"]
    out = []
    for i, ((p, _, _), spec) in enumerate(zip(got, want)):
        text, bold, italic = char_formats(p)
        if (text, p.style.name) != (spec["text"], spec["style"]):
            out.append(f"{i}: text or style")
        for what, mask in (("bold", bold), ("italic", italic)):
            expected = spans_to_mask(spec[what], len(text))
            if any(mask[k] != expected[k] for k in range(len(text)) if not text[k].isspace()):
                out.append(f"{i}: {what}")
        if (p.alignment is not None and p.alignment != 0) != spec["centre"]:
            out.append(f"{i}: alignment")
    return out


def run_program(program: str, tests: Path, name: str, tmp_path: Path) -> docx.Document:
    (tmp_path / "format_brief.py").write_text(program)
    out = tmp_path / f"out-{name}"
    subprocess.run([sys.executable, tmp_path / "format_brief.py", tests / name, out], check=True, capture_output=True)
    return docx.Document(str(out))


#: A program that misses one rule of the guide each (the reference's code with one line changed).
MISSING_ONE_RULE = {
    "body text is only Normal paragraphs": ("if in_table or not heading:", 'if style == "Normal":'),
    "the name only with a plain space": ('"[ \\u00a0]".join', '" ".join'),
    "the heading's number kept": ('re.sub(r"^\\d+\\.\\s+", "", text) == section', "text == section"),
    "the title treated as body text": ('heading = style == "Title" or', "heading = False and"),
    "the phrase matched case-sensitively": ("re.escape(phrase), text, re.I)", "re.escape(phrase), text)"),
}


@pytest.mark.parametrize("level", [3, 4])
def test_docx_unseen_briefs_hold_the_corners_and_each_rule_is_needed(level, tmp_path):
    d, tests, briefs = program_task("docx-formatting", level, tmp_path, "briefs", "brief.docx")
    for name in briefs:
        doc = docx.Document(str(tests / name))
        styles = {p.style.name for p in doc.paragraphs}
        texts = [p.text for p in doc.paragraphs]
        corners = {
            "a table": bool(doc.tables),
            "a bulleted list": "List Bullet" in styles,
            "a non-breaking space in the name": any("\u00a0" in t for t in texts),
            "numbered headings": all(
                t[0].isdigit() for p, t in zip(doc.paragraphs, texts) if p.style.name == "Heading 1"
            ),
            "the phrase in the title": doc.core_properties.keywords.lower() in texts[0].lower(),
            "accents in the owner's name": not doc.core_properties.subject.isascii(),
            "a section with no body text": any(
                a.style.name == "Heading 1" and b.style.name == "Heading 1"
                for a, b in zip(doc.paragraphs, doc.paragraphs[1:])
            ),
        }
        if name == "shipped.docx":
            assert not any(corners.values()), corners
        else:
            assert all(corners.values()), corners
    reference = d.files["solution/format_brief.py"]
    for name, want in briefs.items():
        assert wrong_blocks(run_program(reference, tests, name, tmp_path), want) == [], name
    # level 4's tests are level 3's with two rules more: there, the level-3 program is the one that must fail
    programs = {"level 3's rules": ("CASE: dict = {'level': 4}", "CASE: dict = {'level': 3}")}
    for what, (old, new) in (programs if level == 4 else MISSING_ONE_RULE).items():
        assert old in reference, what
        broken = reference.replace(old, new)
        failing = [
            name for name in sorted(briefs) if wrong_blocks(run_program(broken, tests, name, tmp_path), briefs[name])
        ]
        assert set(failing) >= {"hidden-1.docx", "hidden-2.docx", "hidden-3.docx"}, (what, failing)
        if what not in ("level 3's rules", "the phrase matched case-sensitively"):  # both seen in the shipped brief
            assert "shipped.docx" not in failing, f"{what}: the shipped brief shows no corner"


def test_docx_level_two_keeps_level_one_tests_and_moves_the_targets_into_properties(tmp_path):
    one, two = draft("docx-formatting", 1, 4), draft("docx-formatting", 2, 4)
    assert two.files["tests/test_outputs.py"] == one.files["tests/test_outputs.py"]
    case = embedded_case(one.files["tests/test_outputs.py"])
    assert case["phrase"] in one.files["instruction.md"].replace("\n", " ")
    assert case["phrase"] not in two.files["instruction.md"] and case["name"] not in two.files["instruction.md"]
    props = docx.Document(str(two.write(tmp_path) / "environment" / "app" / "brief.docx")).core_properties
    assert (props.keywords, props.subject, props.category) == (case["phrase"], case["name"], case["heading"])
    assert "house-style.md" in two.files["instruction.md"] and "Keywords" in two.files["environment/app/house-style.md"]


# -- cashflow-memo ---------------------------------------------------------------------------


def memo_paragraphs(program: str, book: Path, tmp_path: Path) -> list[str]:
    (tmp_path / "make_memo.py").write_text(program)
    out = tmp_path / f"memo-{book.stem}.docx"
    subprocess.run([sys.executable, tmp_path / "make_memo.py", book, out], check=True, capture_output=True)
    return [" ".join(p.text.split()).removesuffix(".") for p in docx.Document(str(out)).paragraphs]


#: A memo program that misses one convention of the notes (the reference's code with one part changed).
MISSING_ONE_CONVENTION = {
    "rounding halves to even": ("n = math.floor(abs(x) + 0.5)", "n = round(abs(x))"),
    "a minus sign for a negative amount": (
        'return f"({n:,})" if x < 0 and n else',
        'return f"-{n:,}" if x < 0 and n else',
    ),
    "above the covenant, not at least": ('>= value["covenant"]', '> value["covenant"]'),
    "the last month of the lowest cash": (
        "names[months.index(lows[name])]",
        "names[len(months) - 1 - months[::-1].index(lows[name])]",
    ),
}


@pytest.mark.parametrize("level", [3, 4])
def test_cashflow_unseen_workbooks_hold_the_corners_and_each_convention_is_needed(level, tmp_path):
    d, tests, memos = program_task("cashflow-memo", level, tmp_path, "memos", "cashflow.xlsx")
    lines = {name: "\n".join(want) for name, want in memos.items()}
    assert "(" not in lines["shipped.xlsx"] or level == 4, "the shipped workbook has no negative lowest cash"
    assert "cash (" in lines["unseen-1.xlsx"] and "DEFER" in lines["unseen-1.xlsx"]
    assert "Headroom: 0" in lines["unseen-2.xlsx"] if level == 4 else "PROCEED" in lines["unseen-2.xlsx"]
    reference = d.files["solution/make_memo.py"]
    for name, want in memos.items():
        got = memo_paragraphs(reference, tests / name, tmp_path)
        assert set(want) <= set(got), (name, want, got)
    broken_programs = dict(MISSING_ONE_CONVENTION)
    if level == 4:
        broken_programs["ties ranked by name"] = (
            "key=lambda name: lows[name])",
            "key=lambda name: (lows[name], name))",
        )
    for what, (old, new) in broken_programs.items():
        assert old in reference, what
        broken = reference.replace(old, new)
        failing = [
            name
            for name, want in memos.items()
            if not set(want) <= set(memo_paragraphs(broken, tests / name, tmp_path))
        ]
        assert {"unseen-1.xlsx", "unseen-2.xlsx", "unseen-3.xlsx"} & set(failing), (what, failing)
        if not (level == 4 and what == "a minus sign for a negative amount"):  # level 4's headroom may be negative
            assert "shipped.xlsx" not in failing, f"{what}: the shipped workbook shows no corner"


def test_cashflow_level_two_keeps_level_one_tests_and_moves_the_rules_into_the_notes():
    one, two = draft("cashflow-memo", 1, 4), draft("cashflow-memo", 2, 4)
    assert two.files["tests/test_outputs.py"] == one.files["tests/test_outputs.py"]
    assert "at least the covenant" in one.files["instruction.md"].replace("\n", " ")
    assert "covenant" not in two.files["instruction.md"] and "(1 - variable" not in two.files["instruction.md"]
    notes = two.files["environment/app/finance-notes.md"]
    assert "at least the covenant minimum" in notes.replace("\n", " ") and "B2:D13" in notes
