"""Reference program of a docx-formatting task above level 1: the house style guide's rules, for any brief.

``python3 format_brief.py [IN [OUT]]`` (default: /app/brief.docx in place). The brief's targets come from its
document properties (Keywords: the key phrase, Subject: the owner, Category: the section to centre), as the style
guide says. Body text is every paragraph but the title and headings, list items and table cells included; a
heading's section name is its text without a leading number; the owner's name matches across a non-breaking space.
Runs are cut at every span boundary first (each piece keeps its run's formatting), then the pieces inside a span
get bold/italic. Level 4 also bolds sums of money and every table's first row.
"""

import copy
import os
import re
import sys
from pathlib import Path

import docx
from docx.enum.text import WD_ALIGN_PARAGRAPH
from docx.text.run import Run

CASE: dict = {}  # filled in by the generator

DOC = Path(os.environ.get("OFFICE_TASK_DIR", "/app")) / "brief.docx"
MONEY = re.compile(r"£\d[\d,]*(?:\.\d+)?[km]?")


def blocks(document):
    """(paragraph, in a table, in a table's first row) for every paragraph of the body and of every table."""
    out = [(p, False, False) for p in document.paragraphs]
    for table in document.tables:
        for r, row in enumerate(table.rows):
            for cell in row.cells:
                out += [(p, True, r == 0) for p in cell.paragraphs]
    return out


# borrowed from docx_solve.py: cut_runs, apply


def main():
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else DOC
    target = Path(sys.argv[2]) if len(sys.argv) > 2 else source
    document = docx.Document(str(source))
    props = document.core_properties
    phrase, name, section = props.keywords, props.subject, props.category
    name_pattern = "[ \u00a0]".join(re.escape(word) for word in name.split())
    for paragraph, in_table, header in blocks(document):
        style = paragraph.style.name
        heading = style == "Title" or style.startswith("Heading")
        text = paragraph.text
        if in_table or not heading:
            bold = [m.span() for m in re.finditer(re.escape(phrase), text, re.I)]
            italic = [m.span() for m in re.finditer(name_pattern, text)]
            if CASE["level"] >= 4:
                bold += [m.span() for m in MONEY.finditer(text)]
                if header:
                    bold.append((0, len(text)))
            if bold or italic:
                cut_runs(paragraph, [c for span in bold + italic for c in span])
                apply(paragraph, bold, "bold")
                apply(paragraph, italic, "italic")
        if style.startswith("Heading") and re.sub(r"^\d+\.\s+", "", text) == section:
            paragraph.alignment = WD_ALIGN_PARAGRAPH.CENTER
    document.save(str(target))
    print(f"formatted {source} -> {target}")


if __name__ == "__main__":
    main()
