"""Reference solution of a docx-formatting task: python-docx, run by solution/solve.sh.

Words are often split over several runs, so the runs are first cut at every
occurrence boundary (each piece keeps its run's formatting), then the pieces
inside an occurrence get bold/italic. The heading is centred on the paragraph
itself, not through its style (which other headings share).
"""

import copy
import os
from pathlib import Path

import docx
from docx.enum.text import WD_ALIGN_PARAGRAPH
from docx.text.run import Run

CASE: dict = {}  # filled in by the generator

DOC = Path(os.environ.get("OFFICE_TASK_DIR", "/app")) / "brief.docx"


def occurrences(text, needle, *, ignore_case):
    hay, pat = (text.lower(), needle.lower()) if ignore_case else (text, needle)
    spans, start = [], hay.find(pat)
    while start != -1:
        spans.append((start, start + len(pat)))
        start = hay.find(pat, start + len(pat))
    return spans


def cut_runs(paragraph, cuts):
    """Split runs so that every offset in ``cuts`` falls on a run boundary."""
    pos = 0
    for run in list(paragraph.runs):
        text = run.text
        start, end = pos, pos + len(text)
        pos = end
        inner = sorted(c for c in set(cuts) if start < c < end)
        if not inner:
            continue
        bounds = [start, *inner, end]
        pieces = [text[a - start:b - start] for a, b in zip(bounds, bounds[1:])]
        run.text = pieces[0]
        anchor = run._r
        for piece in pieces[1:]:
            element = copy.deepcopy(run._r)
            anchor.addnext(element)
            Run(element, paragraph).text = piece
            anchor = element


def apply(paragraph, spans, attr):
    pos = 0
    for run in paragraph.runs:
        start, end = pos, pos + len(run.text)
        pos = end
        if end > start and any(a <= start and end <= b for a, b in spans):
            setattr(run.font, attr, True)


def main():
    document = docx.Document(str(DOC))
    for paragraph in document.paragraphs:
        bold = occurrences(paragraph.text, CASE["phrase"], ignore_case=True)
        italic = occurrences(paragraph.text, CASE["name"], ignore_case=False)
        if bold or italic:
            cut_runs(paragraph, [c for span in bold + italic for c in span])
            apply(paragraph, bold, "bold")
            apply(paragraph, italic, "italic")
        if paragraph.text == CASE["heading"] and paragraph.style.name.startswith("Heading"):
            paragraph.alignment = WD_ALIGN_PARAGRAPH.CENTER
    document.save(str(DOC))
    print(f"formatted {DOC}")


if __name__ == "__main__":
    main()
