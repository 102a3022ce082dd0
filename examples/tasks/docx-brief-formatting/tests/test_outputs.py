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

CASE: dict = {'decoy': 'cold-chain',
              'heading': 'Budget outlook',
              'name': 'Ms. Priya Raman',
              'paragraphs': [{'bold': [],
                              'centre': False,
                              'italic': [],
                              'style': 'Title',
                              'text': 'Programme Brief, Q2 2025'},
                             {'bold': [[0, 7]],
                              'centre': False,
                              'italic': [],
                              'style': 'Heading 1',
                              'text': 'Summary'},
                             {'bold': [[19, 40], [114, 135]],
                              'centre': False,
                              'italic': [[187, 202]],
                              'style': 'Normal',
                              'text': 'This brief reviews cold-chain monitoring for Q2 2025 and sets out the '
                                      'decisions the steering group needs to take. Cold-chain monitoring '
                                      'remains the headline measure of the programme, and Ms. Priya Raman '
                                      'has agreed to own it until year end.'},
                             {'bold': [[0, 14]],
                              'centre': True,
                              'italic': [],
                              'style': 'Heading 1',
                              'text': 'Budget outlook'},
                             {'bold': [[0, 5], [81, 102]],
                              'centre': False,
                              'italic': [],
                              'style': 'Normal',
                              'text': 'Note: figures are in thousands and exclude one-off costs. The current '
                                      'plan funds cold-chain monitoring at £117k per quarter, while the '
                                      'cold-chain targets stay unchanged.'},
                             {'bold': [[0, 10]],
                              'centre': False,
                              'italic': [],
                              'style': 'Heading 1',
                              'text': 'Background'},
                             {'bold': [[159, 180]],
                              'centre': False,
                              'italic': [],
                              'style': 'Normal',
                              'text': 'The programme started after the annual review found that cold-chain '
                                      "work had stalled in two regions. Since then Raman's team has rebuilt "
                                      'the reporting so that cold-chain monitoring is measured the same way '
                                      'everywhere.'},
                             {'bold': [[0, 5]],
                              'centre': False,
                              'italic': [],
                              'style': 'Heading 1',
                              'text': 'Risks'},
                             {'bold': [[100, 121]],
                              'centre': False,
                              'italic': [[0, 15], [183, 191]],
                              'style': 'Normal',
                              'text': 'Ms. Priya Raman will report any slippage to the steering group within '
                                      'a week. The main risk is that cold-chain monitoring slips if the data '
                                      'migration overruns, a pattern described in The Goal.'},
                             {'bold': [[0, 10]],
                              'centre': False,
                              'italic': [],
                              'style': 'Heading 1',
                              'text': 'Next steps'},
                             {'bold': [[73, 94]],
                              'centre': False,
                              'italic': [],
                              'style': 'Normal',
                              'text': 'Each region will send its figures by the fifth working day of the '
                                      'month. Cold-chain monitoring will be reviewed again in Q3 2025; until '
                                      'then Raman chairs the working group.'}],
              'phrase': 'cold-chain monitoring'}

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

