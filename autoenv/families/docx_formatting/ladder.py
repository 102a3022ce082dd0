"""docx-formatting above level 1: the house style guide, a program run on unseen briefs, more rules.

Level 2 tells neither the rules nor this brief's targets: the rules are in the comms team's style guide
(``/app/house-style.md``) and the brief's key phrase, owner and section to centre in its document properties
(Keywords, Subject, Category), where the guide says they are. Level 3 asks for a program,
``/app/format_brief.py IN OUT``, that the tests run on briefs the solver never sees, with the corners the guide
words and the shipped brief lacks: the phrase in a table cell and in a bulleted list (body text too), in the title
(not body text), split over three runs; the owner's name with accents and a non-breaking space after the title;
numbered section headings; a section with no body text. Level 4 adds two independent rules: every sum of money in
the body is bold (``£1,250k``, ``£3.5m``), and every table's header row is bold.

The expected formatting of every brief is computed here from how the brief was built (its runs' formatting plus
the spans each rule names), not by running the reference program.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from types import ModuleType
from typing import Any

from autoenv.families.base import function_from
from autoenv.families.office import common

#: A phrase each level's instruction adds (levels 2, 3, 4), in the order of the levels: how the scripted
#: solver's recipe reads the level a task is at.
LEVEL_PHRASES = (
    "house style, written down in",
    "Write a program, `/app/format_brief.py`",
    "The style guide was revised this quarter",
)

PROGRAM = "/app/format_brief.py"
GUIDE = "house-style.md"
FILES = Path(__file__).with_name("files")

#: Owners of the unseen briefs: names a byte-wise or ASCII-only match gets wrong.
ACCENTED_NAMES = ["Dr. Zoë Ødegård", "Prof. José Núñez", "Ms. Ana Müller-Łukasik", "Dr. Søren Kierkegård"]
MONEY = re.compile(r"£\d[\d,]*(?:\.\d+)?[km]?")
NBSP = "\u00a0"

#: Every paragraph of a document, tables' cell paragraphs included (the tests' own function).
iter_blocks = function_from(FILES / "docx_ladder_tests.py", "iter_blocks")


def guide(level: int) -> str:
    """The comms team's style guide (``/app/house-style.md``): every rule of ``level``, in words."""
    rules = [
        "# House style for briefs",
        "",
        "Every brief we send out is formatted by these rules. Nothing else in a brief changes: the text of every",
        "paragraph, the paragraph styles, the formatting already in it (existing bold and italic text) and the",
        "alignment of every paragraph the rules do not name stay exactly as they are.",
        "",
        "## Where a brief's targets are",
        "",
        "Each brief names its own targets in its document properties (File > Info > Properties in Word):",
        "",
        "- **Keywords**: the brief's key phrase;",
        "- **Subject**: the owner's full name, as it is written in the brief;",
        "- **Category**: the name of the section to centre.",
        "",
        "## Rules",
        "",
        "1. The key phrase is **bold** wherever it occurs in the body text, whatever its capitalisation. Only the",
        "   phrase itself becomes bold, not the words around it; a shorter phrase that merely starts the same way",
        "   stays as it is.",
        "2. The owner's full name is *italic* wherever it occurs in the body text, matched exactly (capitals and",
        "   accents as written). Word often puts a non-breaking space between a title and a name (`Dr.` and",
        "   `Amara`): the name counts there too. Other mentions of the person (the surname on its own) stay upright.",
        "3. The heading of the section named in Category is **centred**. Section headings may carry a number",
        "   (`3. Risks`): the section's name is the heading's text without it. A section may have no body text;",
        "   its heading is centred all the same.",
    ]
    if level >= 4:
        rules += [
            "4. (Added this quarter.) Every sum of money in the body text is **bold**: the pound sign and the",
            "   figure after it, with its thousands separators, decimals and a `k` or `m` suffix (`£240k`,",
            "   `£1,250k`, `£3.5m`).",
            "5. (Added this quarter.) The header row (the first row) of every table is **bold**, every cell of it.",
        ]
    rules += [
        "",
        "Body text is every paragraph that is not the title or a heading: ordinary paragraphs, list items and the",
        "paragraphs in table cells. The title and the headings never get the bold or italic of rules 1 and 2.",
    ]
    return "\n".join(rules) + "\n"


def set_targets(doc, phrase: str, name: str, section: str) -> None:
    """Record a brief's targets in its document properties, where the guide says they are."""
    props = doc.core_properties
    props.keywords, props.subject, props.category = phrase, name, section


def strip_number(text: str) -> str:
    return re.sub(r"^\d+\.\s+", "", text)


def _phrase_spans(text: str, phrase: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(re.escape(phrase), text, re.I)]


def _name_spans(text: str, name: str) -> list[tuple[int, int]]:
    pattern = "[ \u00a0]".join(re.escape(word) for word in name.split(" "))
    return [m.span() for m in re.finditer(pattern, text)]


def spans(mask: list[bool]) -> list[list[int]]:
    """The runs of set flags in ``mask`` as [start, end) pairs (how a test file records formatting)."""
    spans, start = [], None
    for i, flag in enumerate([*mask, False]):
        if flag and start is None:
            start = i
        elif not flag and start is not None:
            spans.append([start, i])
            start = None
    return spans


def expected(doc, level: int) -> list[dict[str, Any]]:
    """Every block (paragraph or table-cell paragraph) of ``doc`` as it must look once formatted: its text and
    style, its bold and italic characters (what it has now plus each rule's spans) and whether it is centred."""
    from autoenv.families.docx_formatting.docx_format import char_formats

    props = doc.core_properties
    phrase, name, section = props.keywords, props.subject, props.category
    out = []
    for paragraph, in_table, header in iter_blocks(doc):
        text, bold, italic = char_formats(paragraph)
        style = paragraph.style.name
        heading = style == "Title" or style.startswith("Heading")
        body = in_table or not heading
        spans_b = _phrase_spans(text, phrase) if body else []
        if body and level >= 4:
            spans_b += [m.span() for m in MONEY.finditer(text)]
            if header:
                spans_b.append((0, len(text)))
        for a, b in spans_b:
            bold[a:b] = [True] * (b - a)
        for a, b in _name_spans(text, name) if body else []:
            italic[a:b] = [True] * (b - a)
        out.append(
            {
                "text": text,
                "style": style,
                "bold": spans(bold),
                "italic": spans(italic),
                "centre": style.startswith("Heading") and strip_number(text) == section,
            }
        )
    return out


def build_brief(rng: random.Random, path: Path, g: ModuleType, *, corners: bool) -> None:
    """A brief with its targets in its properties: the shipped one plain (``corners`` False), an unseen one with
    every corner the guide words (tables, lists, numbered headings, an empty section, accents, a non-breaking
    space, the phrase in the title and split over three runs, sums of money written every way). ``g`` is the
    family's generator module (its phrases, names and sentences)."""

    phrase, decoy = rng.choice(g.PHRASES)
    name = rng.choice(ACCENTED_NAMES if corners else g.NAMES)
    q = rng.randrange(len(g.QUARTERS) - 1)
    amount = f"£{rng.randrange(80, 400)}k"
    ctx = {
        "phrase": phrase,
        "decoy": decoy,
        "name": name,
        "book": rng.choice(g.BOOKS),
        "q": g.QUARTERS[q],
        "q2": g.QUARTERS[q + 1],
        "amount": amount,
    }
    middle = ["Background", "Budget outlook", "Risks"]
    rng.shuffle(middle)
    sections = ["Summary", *middle, "Next steps"]
    if corners:
        sections.insert(rng.randrange(2, len(sections)), "Open questions")  # a section with no body text
    target = rng.choice([s for s in sections if s != "Summary"])
    cap = phrase[0].upper() + phrase[1:]
    title = f"{cap}: {rng.choice(g.TITLES)}" if corners else f"{rng.choice(g.TITLES)}, {g.QUARTERS[q]}"

    doc = common.new_document()
    set_targets(doc, phrase, name, target)
    seen = {"P": 0, "N": 0}
    split_at = {"P": rng.randrange(0, 3), "N": rng.randrange(0, 2)}

    def add(style, segments):
        p = doc.add_paragraph(style=style)
        for text, kind in segments:
            family = "P" if kind in ("P", "Pc") else kind
            pieces = [text]
            if family in seen:
                if seen[family] == split_at[family]:
                    if family == "P" and corners:  # a run per word
                        words = text.split(" ")
                        pieces = [w + " " for w in words[:-1]] + [words[-1]]
                    else:
                        cut = text.index(" ") + (1 if family == "N" else 0)
                        pieces = [text[:cut], text[cut:]]
                elif family == "N" and corners:  # Word's non-breaking space after the title
                    pieces = [text.replace(" ", NBSP, 1)]
                seen[family] += 1
            for piece in pieces:
                run = p.add_run(piece)
                run.bold = True if kind == "B" else None
                run.italic = True if kind == "I" else None
        return p

    add("Title", [(title, None)])
    for number, section in enumerate(sections, start=1):
        add("Heading 1", [(f"{number}. {section}" if corners else section, None)])
        for sentences in g.SECTIONS.get(section, []):
            sentences = list(sentences)
            if section in ("Risks", "Next steps") and rng.random() < 0.5:
                sentences.reverse()
            add("Normal", g._segments(sentences, ctx))
        if corners and section == "Summary":
            table = doc.add_table(rows=3, cols=3)
            rows = [
                ("Workstream", "Owner", "Budget"),
                (cap, name, f"£{rng.randrange(1, 9)},{rng.randrange(100, 999)}k"),
                ("Reporting", name.split()[-1], f"£{rng.randrange(1, 9)}.{rng.randrange(1, 9)}m"),
            ]
            for r, cells in enumerate(rows):
                for c, text in enumerate(cells):
                    table.cell(r, c).text = text
        if corners and section == "Next steps":
            add("List Bullet", [("Confirm the ", None), (phrase, "P"), (" budget of ", None), (amount, None)])
            add("List Bullet", [("Agree the reporting dates with ", None), (name, "N"), (".", None)])
    common.save_document(doc, path)


INSTRUCTION = """\
# Format a project brief

`/app/brief.docx` is a Word document: a short project brief with a title,
section headings and body text. The communications team formats every brief
it sends out by its house style, written down in `/app/{guide}`; the style
guide also says where a brief records its own key phrase, owner and section
to centre.
{task}
The Python library python-docx is installed (`import docx`).
"""

IN_PLACE = """
Apply the house style to `/app/brief.docx` in place (save the result back to
`/app/brief.docx`, still a .docx). Change nothing the style guide does not ask
for.
"""

AS_PROGRAM = """
Write a program, `{program}`, that the team can run on any brief:
`python3 {program} IN OUT` reads the brief `IN` (a .docx) and writes it,
formatted by the house style, to `OUT` (a new .docx), changing nothing the
style guide does not ask for. The checker runs it on `/app/brief.docx` and on
other briefs written the same way, each with its own targets and with any of
the things the style guide mentions. Run with no arguments, it may format
`/app/brief.docx` in place.
"""


#: Level 4's one sentence more: the guide has more rules than before (the scripted solver's recipe knows the level
#: by it, as a person would know to read the whole guide again).
REVISED = "\nThe style guide was revised this quarter: apply every rule it now has.\n"


def instruction(level: int) -> str:
    task = AS_PROGRAM.format(program=PROGRAM) if level >= 3 else IN_PLACE
    task += REVISED if level >= 4 else ""
    return common.reflow(INSTRUCTION.format(guide=GUIDE, task=task))
