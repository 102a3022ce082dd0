"""Verifier of a docx-formatting task above level 2: runs the agent's /app/format_brief.py on briefs.

Each brief (the shipped one and briefs the agent never saw, with the corners the house style guide words) goes
through ``python3 /app/format_brief.py IN OUT``, run as nobody by the broker (``agentcall.py``); the output is
compared character by character with the formatting the guide asks for: text and styles unchanged, the bold and
italic characters, the centred heading. Tables' cell paragraphs count as body text, after the document's other
paragraphs (``iter_blocks``).
"""

import base64
import io
from pathlib import Path

import docx
import pytest
from agentcall import agent_folder, run_agent
from docx.enum.text import WD_ALIGN_PARAGRAPH

from docx_format import alignment, char_formats, spans_to_mask

CASE: dict = {}  # filled in by the generator

PROGRAM = "/app/format_brief.py"
READ = "import base64, sys; sys.stdout.write(base64.b64encode(open(sys.argv[1], 'rb').read()).decode())"


def iter_blocks(document):
    """(paragraph, in a table, in a table's first row) for every paragraph, then every table cell's paragraphs."""
    out = [(p, False, False) for p in document.paragraphs]
    for table in document.tables:
        for r, row in enumerate(table.rows):
            for cell in row.cells:
                out += [(p, True, r == 0) for p in cell.paragraphs]
    return out


# borrowed from docx_tests.py: describe


def formatted(name):
    """The agent's program run on the brief ``name`` (a file next to this one); the document it wrote."""
    work = agent_folder({"in.docx": Path(__file__).with_name(name)}, writable=True)
    # one process start: the program (its own output to stderr), then its OUT file read back as nobody
    script = f'python3 {PROGRAM} "$1" "$2" >&2 && python3 -I -c "$3" "$2"'
    done = run_agent(["sh", "-c", script, "sh", str(work / "in.docx"), str(work / "out.docx"), READ], cwd="/app", text=True, timeout=60)
    assert done.returncode == 0, f"{PROGRAM} failed on a brief or wrote no OUT file (exit {done.returncode}): {done.stderr[-1500:]}"
    try:
        return docx.Document(io.BytesIO(base64.b64decode(done.stdout)))
    except Exception as exc:
        pytest.fail(f"{PROGRAM} wrote an OUT that is not a readable .docx: {exc}")


@pytest.mark.parametrize("name", sorted(CASE["briefs"]))
def test_program_formats_the_brief(name):
    document = formatted(name)
    got = iter_blocks(document)
    want = CASE["briefs"][name]
    assert len(got) == len(want), f"{name}: expected {len(want)} paragraphs (table cells included), found {len(got)}"
    for i, ((p, _, _), spec) in enumerate(zip(got, want)):
        text, bold, italic = char_formats(p)
        assert (text, p.style.name) == (spec["text"], spec["style"]), f"{name}: paragraph {i} changed: {(text, p.style.name)!r} (was {(spec['text'], spec['style'])!r})"
        for what, mask in (("bold", bold), ("italic", italic)):
            problem = describe(text, mask, spans_to_mask(spec[what], len(text)))
            assert not problem, f"{name}: {what} in paragraph {i} ({text[:40]!r}): {problem}"
        got_alignment = alignment(p)
        if spec["centre"]:
            assert got_alignment == WD_ALIGN_PARAGRAPH.CENTER, f"{name}: heading {text!r} is not centred ({got_alignment})"
        else:
            assert got_alignment in (None, WD_ALIGN_PARAGRAPH.LEFT), f"{name}: paragraph {i} ({text[:40]!r}) alignment changed to {got_alignment}"
