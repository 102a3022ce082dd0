"""Shell scripting family: a bash tool that tallies files by extension.

Seed failures: scripts that break on spaces in names, count directories or
hidden files against the spec, sort with the locale's collation, or only work
on the one directory they were tried on. The verifier runs the script on
fresh trees it builds itself (spaces, dotfiles, names without extension,
upper-case extensions, nested folders), so only a general script passes.
Recursion, hidden-file handling, the sort order and the output separator vary.
That is level 1 of a 4-level ladder (:data:`LADDER`, :mod:`.ladder`): corner trees, the tool's manual page
instead of the instruction, a large tree within a time limit.
"""

from __future__ import annotations

import random
import sys
import textwrap
from typing import TYPE_CHECKING

from autoenv.families.base import TaskDraft, solve_sh, task_files, task_name
from autoenv.families.levels import load_ladder
from autoenv.families.shell_script import ladder

if TYPE_CHECKING:  # families read seed cases; they do not depend on the proposer
    from autoenv.shared.seed import SeedCase

NAME = "shell-script"
DESCRIPTION = "a bash tool over a directory tree, tested on fresh trees"
KEYWORDS = ("shell", "bash", "script", "find", "files", "directory", "backup", "rotation", "posix")
CATEGORY = "system-administration"
TAGS = ["bash", "shell", "find", "awk"]

#: Level 1 is the task of earlier releases; levels 2-4 are :mod:`autoenv.families.shell_script.ladder`.
LADDER, DEFAULT_LEVEL = load_ladder(__file__)  # levels.toml beside this file

SORTS = {
    "count": ("by `count` descending, ties by extension ascending", "-k2,2nr -k1,1"),
    "bytes": ("by `bytes` descending, ties by extension ascending", "-k3,3nr -k1,1"),
    "ext": ("by extension ascending", "-k1,1"),
}

REFERENCE = (
    ladder.WALK
    + """\
            ext = stem.rsplit(".", 1)[1].lower() if "." in stem else "(none)"
            count, size = stats.get(ext, (0, 0))
            stats[ext] = (count + 1, size + os.path.getsize(path))
    return stats


def render(stats, sort, sep):
    rows = list(stats.items())
    if sort == "count":
        rows.sort(key=lambda r: (-r[1][0], r[0]))
    elif sort == "bytes":
        rows.sort(key=lambda r: (-r[1][1], r[0]))
    else:
        rows.sort(key=lambda r: r[0])
    return "".join(f"{ext}{sep}{c}{sep}{b}\\n" for ext, (c, b) in rows)
"""
)


def _tree(rng: random.Random) -> dict[str, int]:
    names = [
        "report",
        "notes",
        "photo",
        "IMG 0042",
        "data set",
        "backup",
        "README",
        "Makefile",
        "archive.tar",
        "song",
        "draft v2",
    ]
    exts = ["txt", "csv", "log", "JPG", "jpg", "md", "gz", "py", "json", ""]
    files: dict[str, int] = {}
    for _ in range(rng.randint(14, 26)):
        folder = rng.choice(["", "", "", "sub/", "sub/deeper/", "other dir/"])
        base = rng.choice(names)
        ext = rng.choice(exts)
        name = f"{base}.{ext}" if ext else base
        if rng.random() < 0.12:
            name = "." + name
        files[folder + name] = rng.randint(0, 5000)
    return files


def data_files(rng: random.Random) -> dict[str, str]:
    """The shipped tree ``/app/data`` (paths under ``environment/app/``): plain names, none of the corners."""
    return {
        f"data/{rel}": ("".join(rng.choice("abcdefgh \n") for _ in range(size)))[:size]
        for rel, size in _tree(rng).items()
    }


def scope_phrase(recursive: bool) -> str:
    return (
        "every regular file in `DIR` and, recursively, in all of its subdirectories"
        if recursive
        else "every regular file directly inside `DIR` (do not descend into subdirectories)"
    )


def hidden_phrase(hidden: bool) -> str:
    return (
        "Hidden files (names starting with `.`) count like any other file."
        if hidden
        else "Hidden files (names starting with `.`) are skipped."
    )


def generate(case: SeedCase, rng: random.Random, level: int = DEFAULT_LEVEL) -> TaskDraft:
    """A task of ``level`` (:data:`LADDER`); level 1 draws exactly the tasks of earlier releases."""
    if level >= 2:
        return ladder.generate(case, rng, level, sys.modules[__name__])
    recursive = rng.random() < 0.5
    hidden = rng.random() < 0.4
    sort = rng.choice(sorted(SORTS))
    sep_name, sep = rng.choice([("tab", "\t"), ("comma", ","), ("space", " ")])
    script = rng.choice(["/app/bin/tally.sh", "/app/tally.sh", "/app/tools/extstats.sh"])
    tree = _tree(rng)
    scope = scope_phrase(recursive)
    hidden_text = hidden_phrase(hidden)
    sep_text = {"tab": "a tab", "comma": "a comma", "space": "a single space"}[sep_name]
    instruction = textwrap.dedent(f"""\
        # Tally files by extension

        Write a bash script `{script}` (make it executable) that summarises a
        directory tree by file extension:

        ```
        {script} DIR
        ```

        - Consider {scope}. Symbolic links, directories and other special files are
          not counted. {hidden_text}
        - The extension of a file is the part of its name after the last `.`,
          lower-cased (`IMG.JPG` and `a.jpg` both have extension `jpg`, `x.tar.gz`
          has `gz`). A name without a `.` (ignoring a leading `.` of a hidden file)
          has the extension `(none)`.
        - Print one line per extension: `EXTENSION`, `COUNT` (number of files) and
          `BYTES` (their total size in bytes), separated by {sep_text}, sorted
          {SORTS[sort][0]} (plain byte-wise comparison of the extension strings).
          Print nothing else to standard output.
        - File and directory names may contain spaces.
        - If the number of arguments is not 1 or `DIR` is not a directory, print a
          message to standard error and exit with status 2; otherwise exit 0.

        Finally, run it on `/app/data` and save its output as `/app/report.txt`.
        """)
    tests = (
        textwrap.dedent(f'''\
        import os
        import random
        from pathlib import Path

        import pytest
        from agentcall import agent_folder, run_agent  # the agent's script runs as nobody, never as the grader

        SCRIPT = "{script}"
        RECURSIVE, HIDDEN, SORT, SEP = {recursive!r}, {hidden!r}, {sort!r}, {sep!r}

        ''')
        + REFERENCE
        + textwrap.dedent(f"""\


        def run(*args):
            return run_agent(["bash", SCRIPT, *map(str, args)], text=True, timeout=30)


        @pytest.fixture()
        def tree():
            # a fresh folder the script (nobody) can read: pytest's tmp_path is the grader's alone
            return agent_folder()


        def build(root, rng):
            names = ["a", "b c", "Report", "x.tar", "IMG 7", "notes", "z"]
            exts = ["txt", "TXT", "gz", "md", "", "log", "Csv"]
            for _ in range(rng.randint(10, 30)):
                folder = root / rng.choice(["", "", "d1", "d1/d2", "d 3"])
                folder.mkdir(parents=True, exist_ok=True)
                ext = rng.choice(exts)
                name = rng.choice(names) + (f".{{ext}}" if ext else "")
                if rng.random() < 0.2:
                    name = "." + name
                (folder / name).write_text("y" * rng.randint(0, 3000))
            (root / "d1" / "empty dir").mkdir(parents=True, exist_ok=True)
            try:
                (root / "link.txt").symlink_to(root / "d1")
            except OSError:
                pass


        def test_script_is_executable():
            assert os.access(SCRIPT, os.X_OK), f"{{SCRIPT}} missing or not executable"


        def test_report_on_shipped_data():
            got = Path("/app/report.txt").read_text()
            assert got == render(tally("/app/data", RECURSIVE, HIDDEN), SORT, SEP)


        @pytest.mark.parametrize("seed", [{rng.randint(1, 999)}, {rng.randint(1000, 1999)}, {rng.randint(2000, 2999)}])
        def test_fresh_trees(tree, seed):
            build(tree, random.Random(seed))
            out = run(tree)
            assert out.returncode == 0, out.stderr
            assert out.stdout == render(tally(str(tree), RECURSIVE, HIDDEN), SORT, SEP)


        def test_usage_errors(tree):
            assert run().returncode == 2
            assert run(tree, "extra").returncode == 2
            assert run(tree / "missing").returncode == 2
        """)
    )
    depth = "" if recursive else "-maxdepth 1 "
    hidden_filter = "" if hidden else "! -name '.*' "
    awk_sep = {"tab": "\\t", "comma": ",", "space": " "}[sep_name]
    body = textwrap.dedent(f"""\
        #!/bin/bash
        # Tally the files of a directory tree by extension.
        set -euo pipefail
        if [ "$#" -ne 1 ] || [ ! -d "$1" ]; then
          echo "usage: $(basename "$0") DIR" >&2
          exit 2
        fi
        find "$1" {depth}-type f {hidden_filter}-printf '%f\\t%s\\n' \\
          | awk -F'\\t' '{{
              name = $1; if (substr(name, 1, 1) == ".") name = substr(name, 2)
              n = split(name, parts, ".")
              ext = (n > 1) ? tolower(parts[n]) : "(none)"
              count[ext]++; bytes[ext] += $2
            }}
            END {{ for (e in count) printf "%s\\t%d\\t%d\\n", e, count[e], bytes[e] }}' \\
          | LC_ALL=C sort -t "$(printf '\\t')" {SORTS[sort][1]} \\
          | awk -F'\\t' -v OFS='{awk_sep}' '{{ print $1, $2, $3 }}'
        """)
    solution = solve_sh(
        f"mkdir -p \"$(dirname {script})\"\ncat > {script} <<'SH'\n{body}SH\nchmod +x {script}\n{script} /app/data > "
        f"/app/report.txt\ncat /app/report.txt\n"
    )
    files = task_files(case, NAME, CATEGORY, TAGS, instruction, solution, tests)
    for rel, size in tree.items():
        files[f"environment/app/data/{rel}"] = ("".join(rng.choice("abcdefgh \n") for _ in range(size)))[:size]
    name = task_name("shell-script", rng, f"tally-{sort}")
    params = {
        "recursive": recursive,
        "hidden": hidden,
        "sort": sort,
        "separator": sep_name,
        "script": script,
        "files": len(tree),
        "leak_hint": None,
        "stale_output": None,
        "output_path": "/app/report.txt",
    }
    return TaskDraft(name=name, family="shell-script", files=files, params=params)
