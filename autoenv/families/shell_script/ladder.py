"""shell-script above level 1: names with every corner, a tool found from its manual page, a tree at scale.

Level 2 states the corners (names with newlines, tabs, quotes, a leading ``-``, non-ASCII letters; a name ending in
``.``; an empty tree; pipes and links) and the tests build trees that hold them all, which a script that reads
``find``'s output line by line, lower-cases with the locale or splits on white space gets wrong. Level 3 tells
only where the tool's manual page is (``/app/doc/TOOL.1``): the options (their letters drawn per task), defaults,
output separator and exit statuses are found there, and the report's options in the nightly job's crontab; the tests
run every option. Level 4 adds a tree of :data:`BIG_FILES` files the script must tally within :data:`BIG_LIMIT_SEC`
(a process per file takes minutes).
"""

from __future__ import annotations

import random
import textwrap
from types import ModuleType
from typing import TYPE_CHECKING, Any

from autoenv.families.base import TaskDraft, solve_sh, task_files, task_name

if TYPE_CHECKING:
    from autoenv.shared.seed import SeedCase

BIG_FILES = 8_000
#: Seconds the tests give the script for the large tree: ``find -printf`` and one awk take well under a second; a
#: ``stat``/``basename`` process per file takes half a minute or more.
BIG_LIMIT_SEC = 4

SEPARATORS = {"tab": ("\t", "a tab"), "comma": (",", "a single comma (`,`)"), "space": (" ", "a single space")}

#: The walk every level's reference (the tests' copy) tallies: each regular file below ``root`` (its own folder only
#: unless ``recursive``; a dot file only with ``hidden``), up to its name without a leading dot (``stem``). The
#: levels differ in what they make of the stem, not in which files they count.
WALK = """\
def tally(root, recursive, hidden):
    import os
    stats = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if not recursive:
            dirnames[:] = []
        for name in filenames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            if name.startswith(".") and not hidden:
                continue
            stem = name[1:] if name.startswith(".") else name
"""

#: The rules of levels 2 and up (the tests' reference): only a file's own name hides it, only ASCII is lower-cased,
#: an empty extension is ``(none)``.
REFERENCE = (
    """\
ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


"""
    + WALK
    + """\
            ext = stem.rsplit(".", 1)[1].translate(ASCII_LOWER) if "." in stem else ""
            count, size = stats.get(ext or "(none)", (0, 0))
            stats[ext or "(none)"] = (count + 1, size + os.path.getsize(path))
    return stats


def render(stats, sort, sep):
    rows = sorted(stats.items(), key=lambda r: r[0].encode())
    if sort == "count":
        rows.sort(key=lambda r: -r[1][0])
    elif sort == "bytes":
        rows.sort(key=lambda r: -r[1][1])
    return "".join(f"{ext}{sep}{c}{sep}{b}\\n" for ext, (c, b) in rows)
"""
)

#: Trees with every corner of level 2's rules (built by the tests, never shipped): relative path -> bytes.
CORNERS = """\
CORNER_NAMES = [
    "new\\nline.txt", "tab\\there.MD", "back\\\\slash.Log", "-dash.txt", "--help", "ünïcödé.TXT", "日本語.csv",
    "photo.ÉTÉ", "notes.", "...", "..twice", "x.tar.GZ", "it's \\"quoted\\".py", "glob*?[x].txt", "$HOME.sh",
    "  lead space.txt", "Makefile", ".hidden.TXT", ".bashrc", "sub dir/inner.md", "sub dir/deep/-x.GZ",
    ".cache/kept.txt", ".cache/.secret.md", "a\\nb/c\\nd.txt",
]


def build_corners(root, rng):
    import os
    names = list(CORNER_NAMES)
    rng.shuffle(names)
    for rel in names[: rng.randint(len(names) - 6, len(names))]:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"z" * rng.randint(0, 4000))
    (root / "empty dir").mkdir(exist_ok=True)
    os.mkfifo(root / "pipe.txt")
    (root / "link.txt").symlink_to(root / "sub dir" / "inner.md")
    (root / "dirlink.d").symlink_to(root / "sub dir")
"""


def corners_rule() -> str:
    """The rules of levels 2 and up that level 1 leaves open, as the instruction (or the manual page) states them."""
    return (
        "A file inside a hidden directory is not hidden by it (only a file's own name makes it hidden). The "
        "extension is the part of the name after its last `.` with the ASCII letters `A`-`Z` lower-cased and every "
        "other character kept as it is (`IMG.JPG` has `jpg`, `x.tar.gz` has `gz`, `été.ÉTÉ` has `ÉtÉ`). A name "
        "without a `.` (ignoring a leading `.` of a hidden file), or whose last `.` is its last character (`notes.`), "
        "has the extension `(none)`. Names may hold any character but `/` and NUL: spaces, tabs, newlines, quotes, "
        "backslashes, `*`, a leading `-`, non-ASCII letters (never a tab or a newline after the last `.`). Pipes, "
        "sockets, directories and symbolic links (to files or to directories, never followed) are not counted. "
        "An empty tree prints nothing. Extensions are compared as plain bytes (their UTF-8 encoding)."
    )


def script_body(sort: str, sep: str, recursive: bool, hidden: bool, letters: tuple[str, str, str] | None) -> str:
    """The reference script: NUL-separated names from ``find``, one awk, ``LC_ALL=C``; with ``letters`` (recurse,
    hidden, sort key) it takes those options, ``recursive``/``hidden``/``sort`` being the defaults."""
    r, a, s = letters or ("", "", "")
    usage = f"[-{r}] [-{a}] [-{s} count|bytes|ext] DIR" if letters else "DIR"
    options = (
        textwrap.dedent(f"""\
        while getopts ":{r}{a}{s}:" opt; do
          case $opt in
            {r}) recursive=1 ;;
            {a}) hidden=1 ;;
            {s}) case $OPTARG in count|bytes|ext) sort=$OPTARG ;; *) usage ;; esac ;;
            *) usage ;;
          esac
        done
        shift $((OPTIND - 1))
        """)
        if letters
        else ""
    )
    return (
        textwrap.dedent(f"""\
        #!/bin/bash
        # Tally the regular files of a directory tree by extension (names may hold any byte but / and NUL).
        set -euo pipefail
        export LC_ALL=C
        usage() {{ echo "usage: $(basename "$0") {usage}" >&2; exit 2; }}
        recursive={int(recursive)} hidden={int(hidden)} sort={sort}
        """)
        + options
        + textwrap.dedent(f"""\
        {{ [ "$#" -eq 1 ] && [ -d "$1" ]; }} || usage
        depth=(); [ "$recursive" = 1 ] || depth=(-maxdepth 1)
        filter=(); [ "$hidden" = 1 ] || filter=(! -name '.*')
        case $sort in count) keys=(-k2,2nr -k1,1) ;; bytes) keys=(-k3,3nr -k1,1) ;; *) keys=(-k1,1) ;; esac
        find "$1" -mindepth 1 "${{depth[@]}}" -type f "${{filter[@]}}" -printf '%s/%f\\0' \\
          | awk 'BEGIN {{ RS = "\\0" }}
              {{ i = index($0, "/"); size = substr($0, 1, i - 1); name = substr($0, i + 1)
                if (substr(name, 1, 1) == ".") name = substr(name, 2)
                n = split(name, parts, ".")
                ext = (n > 1 && parts[n] != "") ? tolower(parts[n]) : "(none)"
                count[ext]++; bytes[ext] += size }}
              END {{ for (e in count) printf "%s\\t%d\\t%.0f\\n", e, count[e], bytes[e] }}' \\
          | sort -t "$(printf '\\t')" "${{keys[@]}}" \\
          | awk -F'\\t' -v OFS='{sep}' '{{ print $1, $2, $3 }}'
        """)
    )


def manual(tool: str, letters: tuple[str, str, str], sort: str, sep_words: str) -> str:
    """The tool's manual page (plain text, as ``man`` prints it): the only place its options and format are told."""
    r, a, s = letters
    body = textwrap.fill(corners_rule(), 64, initial_indent=" " * 7, subsequent_indent=" " * 7)
    return (
        textwrap.dedent(f"""\
        {tool.upper()}(1)                     Operations Manual                    {tool.upper()}(1)

        NAME
               {tool} - summarise a directory tree by file extension

        SYNOPSIS
               {tool} [-{r}] [-{a}] [-{s} KEY] DIR

        DESCRIPTION
               {tool} counts the regular files of DIR by extension and prints, per
               extension, how many files have it and their total size in bytes.
               Without options it counts only the files directly inside DIR and
               skips hidden files (names starting with "."). Options come before
               DIR; an option given twice takes its last value.

        """)
        + body
        + textwrap.dedent(f"""

        OPTIONS
               -{r}     Descend into all subdirectories of DIR, recursively.

               -{a}     Count hidden files too.

               -{s} KEY Sort the lines by KEY: "count" (the number of files,
                      descending, ties by extension ascending), "bytes" (the
                      total size, descending, ties by extension ascending) or
                      "ext" (the extension, ascending). Default: {sort}.

        OUTPUT
               One line per extension: EXTENSION, COUNT and BYTES, separated by
               {sep_words}, and nothing else on standard output.

        EXIT STATUS
               0      Success.

               2      Usage error: an unknown option, -{s} without a KEY or with one
                      that is not one of the three, no DIR or more than one, or DIR
                      not a directory. A message goes to standard error and nothing
                      to standard output.

        SEE ALSO
               find(1), awk(1), sort(1)
        """)
    )


def tests(
    rng: random.Random,
    script: str,
    sep: str,
    defaults: tuple[bool, bool, str],
    letters: tuple[str, str, str] | None,
    report: list[Any],
) -> str:
    """The tests of levels 2 and up: the report, corner trees (with every option when there are options), errors."""
    r, a, s = letters or ("", "", "")
    runs = (
        [
            ([], defaults),
            ([f"-{r}"], (True, defaults[1], defaults[2])),
            ([f"-{a}", f"-{s}", "ext"], (defaults[0], True, "ext")),
            ([f"-{r}", f"-{a}", f"-{s}", "count"], (True, True, "count")),
            ([f"-{s}", "ext", f"-{s}", "bytes", f"-{r}"], (True, defaults[1], "bytes")),
        ]
        if letters
        else [([], defaults)]
    )
    errors = [["-q"], [f"-{s}", "size"], [f"-{s}"]] if letters else []
    return (
        textwrap.dedent(f"""\
        import os
        import random
        import time
        from pathlib import Path

        import pytest
        from agentcall import agent_folder, run_agent  # the agent's script runs as nobody, never as the grader

        SCRIPT = "{script}"
        SEP = {sep!r}
        RUNS = {runs!r}
        REPORT_ARGS = {report!r}
        SEED = {rng.randint(1, 10**6)}


        """)
        + REFERENCE
        + "\n\n"
        + CORNERS
        + textwrap.dedent(f"""\


        def run(*args, timeout=30):
            return run_agent(["bash", SCRIPT, *map(str, args)], text=True, timeout=timeout)


        def test_script_is_executable():
            assert os.access(SCRIPT, os.X_OK), f"{{SCRIPT}} missing or not executable"


        def test_report_on_shipped_data():
            (recursive, hidden, sort) = REPORT_ARGS
            got = Path("/app/report.txt").read_text()
            assert got == render(tally("/app/data", recursive, hidden), sort, SEP)


        @pytest.mark.parametrize("run_no", range({3 if len(runs) == 1 else len(runs)}))  # each run, 3 trees at least
        def test_corner_trees(run_no):
            args, expect = RUNS[run_no % len(RUNS)]
            seed = SEED + run_no
            root = agent_folder()
            build_corners(root, random.Random(seed))
            recursive, hidden, sort = expect
            out = run(*args, str(root) + ("/" if seed % 2 else ""))
            assert out.returncode == 0, out.stderr[-2000:]
            assert out.stdout == render(tally(str(root), recursive, hidden), sort, SEP), args


        def test_empty_tree():
            out = run(agent_folder())
            assert out.returncode == 0 and out.stdout == "", out.stderr


        @pytest.mark.parametrize("args", [[], ["two", "args"], ["/nonexistent/dir"], *{errors!r}])
        def test_usage_errors(args):
            root = agent_folder()
            out = run(*[root if a == "two" else a for a in args])
            assert out.returncode == 2, (args, out.returncode)
            assert out.stdout == "", args
        """)
    )


def big_tests(letters: tuple[str, str, str] | None) -> str:
    """Level 4's test: a tree of :data:`BIG_FILES` files, tallied within :data:`BIG_LIMIT_SEC`."""
    r, a, s = letters or ("r", "a", "s")
    return textwrap.dedent(f"""\


        def test_large_tree_in_time():
            options = ["-{r}", "-{a}", "-{s}", "count"]
            small = agent_folder({{"a.txt": "x", "sub/b.TXT": "yy", ".c": ""}})
            probe = run(*options, small)  # a script wrong on three files is not timed on thirty thousand
            assert probe.stdout == render(tally(str(small), True, True), "count", SEP), "wrong on a three-file tree"
            rng = random.Random(7)
            root = agent_folder()
            folders = [root / f"team {{i}}" / f"Q{{i % 4}}" for i in range(40)]
            for folder in folders:
                folder.mkdir(parents=True)
            exts = ["txt", "LOG", "gz", "md", "Csv", "json", "", "tar.GZ", "ÉTÉ"]
            for i in range({BIG_FILES}):
                ext = rng.choice(exts)
                name = ("." if i % 50 == 0 else "") + f"file {{i}}" + (f".{{ext}}" if ext else "")
                (rng.choice(folders) / name).write_bytes(b"x" * rng.randint(0, 60))
            started = time.monotonic()
            try:
                out = run(*options, root, timeout={BIG_LIMIT_SEC})
            except Exception as exc:  # the broker's timeout
                pytest.fail(f"{{SCRIPT}} did not tally {BIG_FILES} files within {BIG_LIMIT_SEC} s: {{exc!r}}")
            assert out.returncode == 0, out.stderr[-2000:]
            assert time.monotonic() - started < {BIG_LIMIT_SEC}
            assert out.stdout == render(tally(str(root), True, True), "count", SEP)
        """)


def generate(case: SeedCase, rng: random.Random, level: int, g: ModuleType) -> TaskDraft:
    """A shell-script task of ``level`` >= 2 (:data:`~autoenv.families.shell_script.generator.LADDER`); ``g`` is the
    generator module, for level 1's names, sort orders and shipped tree."""
    SORTS, NAME = g.SORTS, g.NAME
    recursive = rng.random() < 0.5
    hidden = rng.random() < 0.4
    sort = rng.choice(sorted(SORTS))
    sep_name = rng.choice(sorted(SEPARATORS))
    sep, sep_words = SEPARATORS[sep_name]
    tool = rng.choice(["tally", "extstats", "typecount"])
    script = rng.choice([f"/app/bin/{tool}.sh", f"/app/{tool}.sh", f"/app/tools/{tool}.sh"])
    app = g.data_files(rng)
    letters: tuple[str, str, str] | None = None
    if level == 2:
        report = [recursive, hidden, sort]
        run_line = f"{script} /app/data > /app/report.txt"
        instruction = (
            textwrap.dedent(f"""\
            # Tally files by extension

            Write a bash script `{script}` (make it executable) that summarises a
            directory tree by file extension:

            ```
            {script} DIR
            ```

            - Consider {g.scope_phrase(recursive)}. {g.hidden_phrase(hidden)}
            - Print one line per extension: `EXTENSION`, `COUNT` (number of files) and
              `BYTES` (their total size in bytes), separated by {sep_words}, sorted
              {SORTS[sort][0]}. Print nothing else to standard output.
            - If the number of arguments is not 1 or `DIR` is not a directory, print a
              message to standard error (nothing to standard output) and exit with
              status 2; otherwise exit 0.

            """)
            + textwrap.fill(corners_rule(), 78)
            + textwrap.dedent("""


            The tests run the script on trees you do not see, which hold every corner above.

            Finally, run it on `/app/data` and save its output as `/app/report.txt`.
            """)
        )
    else:
        letters = (rng.choice("rR"), rng.choice("aA"), rng.choice("sk"))
        r, a, s = letters
        flags = [f"-{r}"] * (rng.random() < 0.6) + [f"-{a}"] * (rng.random() < 0.5)
        report_sort = rng.choice([sort, *sorted(SORTS)])
        flags += [f"-{s}", report_sort] if report_sort != sort or rng.random() < 0.3 else []
        report = [f"-{r}" in flags, f"-{a}" in flags, report_sort]
        run_line = f"{script} {' '.join(flags)} /app/data > /app/report.txt".replace("  ", " ")
        recursive = hidden = False  # the manual page's defaults: only DIR's own files, hidden ones skipped
        app[f"doc/{tool}.1"] = manual(tool, letters, sort, sep_words)
        app[f"etc/cron.d/{tool}"] = (
            "# m h dom mon dow user command\n"
            f"15 2 * * * ops {script} {' '.join(flags)} /srv/share/projects > /var/reports/{tool}.txt "
            f"2>> /var/log/{tool}.err\n"
        ).replace("  ", " ")
        instruction = textwrap.dedent(f"""\
            # Rewrite the lost `{tool}` tool

            The operations team's nightly job (`/app/etc/cron.d/{tool}`) runs `{script}`, a bash
            script that summarises a directory tree by file extension; it was lost in a disk
            migration. Its manual page survived: `/app/doc/{tool}.1`
            (plain text). Write `{script}` again as a bash script (make it executable) that
            behaves exactly as the manual page says: its options, defaults, output format
            and exit statuses. The tests run it with every option on trees you do not see,
            which hold every corner the manual page describes.

            Then run it on `/app/data` with the options of the nightly job and save its
            output as `/app/report.txt`.
            """)
        if level >= 4:
            instruction += textwrap.dedent(f"""
                The share the job summarises has grown to hundreds of thousands of files: the
                tests also run the script on a tree of {BIG_FILES:,} files and allow it
                {BIG_LIMIT_SEC} seconds on one CPU core.
                """)
    body = script_body(sort, sep, recursive, hidden, letters)
    test_text = tests(rng, script, sep, (recursive, hidden, sort), letters, report)
    if level >= 4:
        test_text += big_tests(letters)
    solution = solve_sh(
        f"mkdir -p \"$(dirname {script})\"\ncat > {script} <<'SH'\n{body}SH\nchmod +x {script}\n{run_line}\n"
        "cat /app/report.txt\n"
    )
    files = task_files(
        case,
        NAME,
        g.CATEGORY,
        g.TAGS,
        instruction,
        solution,
        test_text,
        app=app,
        verifier_timeout=120.0 if level >= 4 else 60.0,
    )
    params = {
        "level": level,
        "recursive": recursive,
        "hidden": hidden,
        "sort": sort,
        "separator": sep_name,
        "script": script,
        "options": "".join(letters) if letters else None,
        "leak_hint": None,
        "stale_output": None,
        "output_path": "/app/report.txt",
    }
    return TaskDraft(name=task_name(NAME, rng, f"tally-l{level}"), family=NAME, files=files, params=params)
