"""Family ``docx-formatting``: format a Word brief (bold a phrase, italicise a name, centre a heading).

The generated ``brief.docx`` is built run by run so that the task has the
traps real documents have: one occurrence of the phrase and one of the name
are split across runs, the phrase appears capitalised at a sentence start, a
shorter phrase that starts the same way and the surname on its own must stay
unformatted, and existing bold/italic text must survive. Tests read the file
with python-docx (see ``verifiers/docx_tests.py``).

Levels 2-4 (:data:`LADDER`, :mod:`.ladder`) leave the rules to a house style guide and the targets to the brief's
document properties, then ask for a program the tests run on unseen briefs, then add rules; level 1 is the task
above, unchanged.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from autoenv.families.base import function_from
from autoenv.families.docx_formatting import ladder
from autoenv.families.levels import load_ladder
from autoenv.families.office import common

NAME = "docx-formatting"
DESCRIPTION = "format a Word brief: bold a phrase, italicise a name, centre a heading"
KEYWORDS = ("docx", "word", "document", "bold", "italic", "formatting", "python-docx", "brief")
FILES = Path(__file__).with_name("files")
DOCX_FORMAT_PATH = Path(__file__).with_name("docx_format.py")

PHRASES = [
    ("net revenue retention", "net revenue"),
    ("single sign-on rollout", "single sign-on"),
    ("carbon-neutral shipping", "carbon-neutral"),
    ("zero-downtime cutover", "zero-downtime"),
    ("supplier payment automation", "supplier payment"),
    ("cold-chain monitoring", "cold-chain"),
    ("customer onboarding backlog", "customer onboarding"),
    ("field service scheduling", "field service"),
]
NAMES = [
    "Dr. Amara Okafor",
    "Prof. Lena Vogel",
    "Ms. Priya Raman",
    "Mr. Tomasz Nowak",
    "Dr. Hiroshi Tanaka",
    "Ms. Sofia Marquez",
    "Dr. Kwame Mensah",
    "Prof. Ingrid Larsen",
]
BOOKS = ["The Goal", "Working Backwards", "Team Topologies", "Accelerate", "The Phoenix Project"]
TITLES = ["Steering Group Brief", "Programme Brief", "Quarterly Brief", "Board Brief"]
QUARTERS = ["Q1 2025", "Q2 2025", "Q3 2025", "Q4 2025"]

LADDER, DEFAULT_LEVEL = load_ladder(__file__)
#: How many unseen briefs the tests of levels 3 and 4 run the program on (besides the shipped one).
HIDDEN_BRIEFS = 3

# One section per key; each sentence is a list of segments: plain text, or
# (kind, text) with kind P (phrase), Pc (capitalised phrase), N (name),
# S (surname), D (decoy start of the phrase), B (bold label), I (italic title).
SECTIONS = {
    "Summary": [
        [
            ["This brief reviews ", ("P",), " for {q} and sets out the decisions the steering group needs to take."],
            [
                ("Pc",),
                " remains the headline measure of the programme, and ",
                ("N",),
                " has agreed to own it until year end.",
            ],
        ]
    ],
    "Background": [
        [
            ["The programme started after the annual review found that ", ("D",), " work had stalled in two regions."],
            [
                "Since then ",
                ("S",),
                "'s team has rebuilt the reporting so that ",
                ("P",),
                " is measured the same way everywhere.",
            ],
        ]
    ],
    "Budget outlook": [
        [
            [("B", "Note:"), " figures are in thousands and exclude one-off costs."],
            [
                "The current plan funds ",
                ("P",),
                " at {amount} per quarter, while the ",
                ("D",),
                " targets stay unchanged.",
            ],
        ]
    ],
    "Risks": [
        [
            [
                "The main risk is that ",
                ("P",),
                " slips if the data migration overruns, a pattern described in ",
                ("I", "{book}"),
                ".",
            ],
            [("N",), " will report any slippage to the steering group within a week."],
        ]
    ],
    "Next steps": [
        [
            [("Pc",), " will be reviewed again in {q2}; until then ", ("S",), " chairs the working group."],
            ["Each region will send its figures by the fifth working day of the month."],
        ]
    ],
}


def _segments(sentences, ctx):
    """Flatten sentences into (text, kind) segments with context filled in."""
    out = []
    for sentence in sentences:
        if out:
            out.append((" ", None))
        for seg in sentence:
            if isinstance(seg, str):
                out.append((seg.format(**ctx), None))
            elif seg[0] in ("B", "I"):
                out.append((seg[1].format(**ctx), seg[0]))
            else:
                kind = seg[0]
                text = {
                    "P": ctx["phrase"],
                    "Pc": ctx["phrase"][0].upper() + ctx["phrase"][1:],
                    "N": ctx["name"],
                    "S": ctx["name"].split()[-1],
                    "D": ctx["decoy"],
                }[kind]
                out.append((text, kind))
    return out


#: Where a phrase occurs in a text: the reference solution's own ``occurrences`` (``files/docx_solve.py``), so the
#: spans the verifier expects are the ones the solution formats.
_occurrences = function_from(FILES / "docx_solve.py", "occurrences")


def build_document(rng: random.Random, path: Path) -> dict:
    """Write brief.docx and return the CASE the verifier needs."""
    from autoenv.families.docx_formatting.docx_format import char_formats

    phrase, decoy = rng.choice(PHRASES)
    name = rng.choice(NAMES)
    q_index = rng.randrange(len(QUARTERS) - 1)
    ctx = {
        "phrase": phrase,
        "decoy": decoy,
        "name": name,
        "book": rng.choice(BOOKS),
        "q": QUARTERS[q_index],
        "q2": QUARTERS[q_index + 1],
        "amount": f"£{rng.randrange(80, 400)}k",
    }
    middle = ["Background", "Budget outlook", "Risks"]
    rng.shuffle(middle)
    headings = ["Summary", *middle, "Next steps"]
    if rng.random() < 0.3:
        headings.remove("Background")  # not every brief has every section
    target = rng.choice([h for h in headings if h != "Summary"])
    title = f"{rng.choice(TITLES)}, {QUARTERS[q_index]}"

    doc = common.new_document()
    seen = {"P": 0, "N": 0}
    split_at = {"P": rng.randrange(0, 3), "N": rng.randrange(0, 2)}  # which occurrence Word "split"

    def add(style, segments):
        p = doc.add_paragraph(style=style)
        for seg_text, kind in segments:
            pieces = [seg_text]
            family = "P" if kind in ("P", "Pc") else kind
            if family in seen:
                if seen[family] == split_at[family]:
                    cut = seg_text.index(" ") + (1 if family == "N" else 0)
                    pieces = [seg_text[:cut], seg_text[cut:]]
                seen[family] += 1
            for piece in pieces:
                run = p.add_run(piece)
                if kind == "B":
                    run.bold = True
                elif kind == "I":
                    run.italic = True

    add("Title", [(title, None)])
    for heading in headings:
        add("Heading 1", [(heading, None)])
        for sentences in SECTIONS[heading]:
            sentences = list(sentences)
            if heading in ("Risks", "Next steps") and rng.random() < 0.5:
                sentences.reverse()
            add("Normal", _segments(sentences, ctx))

    # expected formatting = what the document shows now, plus the phrase (bold) and the name (italic)
    paragraphs = []
    for p in doc.paragraphs:
        text, bold, italic = char_formats(p)
        body = p.style.name == "Normal"
        for a, b in _occurrences(text, phrase, ignore_case=True) if body else []:
            bold[a:b] = [True] * (b - a)
        for a, b in _occurrences(text, name, ignore_case=False) if body else []:
            italic[a:b] = [True] * (b - a)
        paragraphs.append(
            {
                "text": text,
                "style": p.style.name,
                "bold": ladder.spans(bold),
                "italic": ladder.spans(italic),
                "centre": p.style.name == "Heading 1" and text == target,
            }
        )
    common.save_document(doc, path)
    return {"phrase": phrase, "name": name, "heading": target, "decoy": decoy, "paragraphs": paragraphs}


INSTRUCTION = """\
# Format a project brief

`/app/brief.docx` is a Word document: a short project brief with a title,
section headings and body text. Edit it in place (save the result back to
`/app/brief.docx`, still a .docx) so that:

1. Every occurrence of the phrase **"{phrase}"** in the body text is **bold**,
   whatever its capitalisation. Only the phrase itself becomes bold, not the
   words around it; a shorter phrase that merely starts the same way
   ("{decoy}" on its own) stays as it is.
2. Every occurrence of the full name **"{name}"** is *italic*. Other mentions
   of the person (the surname on its own) stay upright.
3. The section heading **"{heading}"** is centred. Every other paragraph keeps
   its current alignment.

Change nothing else: the text of every paragraph, the paragraph styles, and
the formatting already in the document (existing bold and italic text) must
stay exactly as they are. The Python library python-docx is installed
(`import docx`).
"""


def generate(task_dir: Path, rng: random.Random, seed_case=None, level: int = DEFAULT_LEVEL) -> None:
    """A docx-formatting task of ``level`` (:data:`LADDER`); level 1 writes exactly the tasks of earlier releases."""
    task_dir = Path(task_dir)
    if level >= 3:
        _as_program(task_dir, rng, seed_case, level)
        return
    case = build_document(rng, task_dir / "environment" / "app" / "brief.docx")
    if level == 2:
        _from_the_guide(task_dir, case, seed_case)
        return
    common.write(task_dir / "instruction.md", common.reflow(INSTRUCTION.format(**case)))
    common.write_task_toml(task_dir, FILES / "task.toml", seed_case)
    common.write(task_dir / "environment" / "Dockerfile", common.dockerfile(common.DOCX_PIN))
    solve_case = {k: case[k] for k in ("phrase", "name", "heading")}
    common.write_python_solution(task_dir, FILES / "docx_solve.py", solve_case)
    common.write_tests(task_dir, FILES / "docx_tests.py", case, DOCX_FORMAT_PATH)


def _from_the_guide(task_dir: Path, case: dict, seed_case) -> None:
    """Level 2: level 1's brief and tests; the rules in the style guide, the targets in the document properties."""
    import docx

    path = task_dir / "environment" / "app" / "brief.docx"
    doc = docx.Document(str(path))
    ladder.set_targets(doc, case["phrase"], case["name"], case["heading"])
    common.save_document(doc, path)
    common.write(task_dir / "environment" / "app" / ladder.GUIDE, ladder.guide(2))
    common.write(task_dir / "instruction.md", ladder.instruction(2))
    common.write_task_toml(task_dir, FILES / "task.toml", seed_case)
    common.write(task_dir / "environment" / "Dockerfile", common.dockerfile(common.DOCX_PIN))
    common.write_python_solution(task_dir, FILES / "docx_ladder_solve.py", {"level": 2})
    common.write_tests(task_dir, FILES / "docx_tests.py", case, DOCX_FORMAT_PATH)


def _as_program(task_dir: Path, rng: random.Random, seed_case, level: int) -> None:
    """Levels 3 and 4: the program ``/app/format_brief.py``, run by the tests on the shipped brief and on
    :data:`HIDDEN_BRIEFS` unseen ones with the guide's corners; expectations from how each brief was built."""
    import shutil
    import tempfile

    import docx

    app = task_dir / "environment" / "app"
    ladder.build_brief(rng, app / "brief.docx", sys.modules[__name__], corners=False)
    with tempfile.TemporaryDirectory() as tmp:
        briefs = {"shipped.docx": Path(tmp) / "shipped.docx"}
        shutil.copyfile(app / "brief.docx", briefs["shipped.docx"])
        for n in range(1, HIDDEN_BRIEFS + 1):
            briefs[f"hidden-{n}.docx"] = Path(tmp) / f"hidden-{n}.docx"
            ladder.build_brief(rng, briefs[f"hidden-{n}.docx"], sys.modules[__name__], corners=True)
        expected = {name: ladder.expected(docx.Document(str(path)), level) for name, path in briefs.items()}
        common.write_tests(
            task_dir,
            FILES / "docx_ladder_tests.py",
            {"briefs": expected},
            DOCX_FORMAT_PATH,
            *briefs.values(),
            unprivileged=True,
        )
    common.write(app / ladder.GUIDE, ladder.guide(level))
    common.write(task_dir / "instruction.md", ladder.instruction(level))
    common.write_task_toml(task_dir, FILES / "task.toml", seed_case)
    common.write(task_dir / "environment" / "Dockerfile", common.dockerfile(common.DOCX_PIN))
    program = common.solution_source(FILES / "docx_ladder_solve.py", {"level": level})
    common.write_program_solution(task_dir, program, "/app/format_brief.py")
