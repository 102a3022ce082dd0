"""Verifier of a docx-formatting task: reads /app/brief.docx with python-docx.

Checks, character by character, that the phrase is bold, the name italic, the
heading centred, and that nothing else changed: paragraph texts and styles,
pre-existing bold/italic text, other paragraphs' alignment. Formatting is
resolved the way Word shows it: a run's own setting, else its character
style's, else the paragraph style's (each with its base styles); see
``docx_format.py`` next to this file.
"""

import os
from pathlib import Path

import docx
import pytest
from docx.enum.text import WD_ALIGN_PARAGRAPH

from docx_format import alignment, char_formats, spans_to_mask

CASE: dict = {}  # filled in by the generator

DOC = Path(os.environ.get("OFFICE_TASK_DIR", "/app")) / "brief.docx"


def describe(text, mask, expected):
    wrong = [i for i in range(len(text)) if not text[i].isspace() and mask[i] != expected[i]]
    if not wrong:
        return ""
    i = wrong[0]
    return f"{len(wrong)} character(s) wrong, first at {i}: ...{text[max(0, i - 20):i]}[{text[i]}]{text[i + 1:i + 20]}... is {'set' if mask[i] else 'not set'}"


@pytest.fixture(scope="module")
def document():
    assert DOC.is_file(), f"{DOC} is missing"
    try:
        return docx.Document(str(DOC))
    except Exception as exc:
        pytest.fail(f"{DOC} is not a readable .docx: {exc}")


def test_text_and_styles_unchanged(document):
    paragraphs = [p for p in document.paragraphs]
    got = [(p.text, p.style.name) for p in paragraphs]
    want = [(p["text"], p["style"]) for p in CASE["paragraphs"]]
    assert len(got) == len(want), f"expected {len(want)} paragraphs, found {len(got)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"paragraph {i} changed: {g!r} (was {w!r})"


def test_phrase_bold_and_nothing_else(document):
    for i, (p, spec) in enumerate(zip(document.paragraphs, CASE["paragraphs"])):
        text, bold, _ = char_formats(p)
        assert text == spec["text"], f"paragraph {i}: run text {text!r} differs from the paragraph text"
        problem = describe(text, bold, spans_to_mask(spec["bold"], len(text)))
        assert not problem, f"bold in paragraph {i} ({text[:40]!r}...): {problem}"


def test_name_italic_and_nothing_else(document):
    for i, (p, spec) in enumerate(zip(document.paragraphs, CASE["paragraphs"])):
        text, _, italic = char_formats(p)
        problem = describe(text, italic, spans_to_mask(spec["italic"], len(text)))
        assert not problem, f"italic in paragraph {i} ({text[:40]!r}...): {problem}"


def test_heading_centred_others_not(document):
    for i, (p, spec) in enumerate(zip(document.paragraphs, CASE["paragraphs"])):
        got = alignment(p)
        if spec["centre"]:
            assert got == WD_ALIGN_PARAGRAPH.CENTER, f"heading {p.text!r} is not centred (alignment {got})"
        else:
            assert got in (None, WD_ALIGN_PARAGRAPH.LEFT), f"paragraph {i} ({p.text[:40]!r}) alignment changed to {got}"

