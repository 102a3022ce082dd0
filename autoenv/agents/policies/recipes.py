"""Recipes the scripted policy knows: task families recognised from the instruction.

A recipe never looks at a task's solution or tests. It reads the instruction,
inspects the sandbox with commands, writes what a competent engineer would
write for that family, then checks the result by running it. Each recipe is a
generator: it yields :class:`Plan` objects (actions to run now) and receives
the :class:`~autoenv.agents.policies.base.ActionResult` list for them, so
its later decisions depend on what the commands really printed.
"""

from __future__ import annotations

import functools
import posixpath
import re
import shlex
from typing import Any

from autoenv.families.bugfix.reference import REFERENCE_BODIES
from autoenv.families.registry import recipes
from autoenv.families.solver import Episode, Plan, Recipe
from autoenv.shared.actions import FinishAction, ReadFileAction, RunAction, WriteFileAction

__all__ = [
    "REFERENCE_BODIES",
    "RECIPES",
    "Episode",
    "Plan",
    "Recipe",
    "all_recipes",
    "find_tests_and_run",
    "match_recipe",
]


_PATH = r"`?(?P<path>(?:/|\./|~/)?[\w.-]+(?:/[\w.-]+)*)`?"
_QUOTE = "\"'\u201c\u201d\u2018\u2019`"


def _clean_path(path: str) -> str:
    return path.rstrip(".,;:)")


def find_tests_and_run() -> Episode:
    """Look for a test suite next to the code and run it (results only inform the record)."""
    found = yield Plan(
        [
            RunAction(
                command="find . -maxdepth 3 \\( -name 'test_*.py' -o -name '*_test.py' \\) -not -path '*/.*' | head -20"
            )
        ],
        "Check whether the project ships tests I can run.",
    )
    if found and found[0].exit_code == 0 and ".py" in found[0].output:
        yield Plan([RunAction(command="python3 -m pytest -q -x 2>&1 | tail -25", timeout_sec=300)], "Run the tests.")


# -- write a literal ------------------------------------------------------------------------


class WriteLiteral(Recipe):
    """ "Write "hello" to /app/out.txt" and its phrasings."""

    name = "write_literal"
    _patterns = [
        re.compile(
            rf"\b(?:write|put|save|store|echo)\s+(?:the\s+(?:word|text|string|line)\s+)?[{_QUOTE}](?P<text>[^{_QUOTE}\n]+)[{_QUOTE}]"
            rf"\s+(?:\(and nothing else\)\s+)?(?:in(?:to)?|to)\s+(?:the\s+file\s+)?{_PATH}",
            re.I,
        ),
        re.compile(
            rf"\b(?:write|put|save)\s+the\s+(?:word|text|string)\s+(?P<text>[^\s{_QUOTE}]+)\s+(?:\(and nothing "
            rf"else\)\s+)?"
            rf"(?:in(?:to)?|to)\s+(?:the\s+file\s+)?{_PATH}",
            re.I,
        ),
        re.compile(
            rf"\bcreate\s+(?:a\s+)?(?:file\s+)?{_PATH}\s+(?:containing|with\s+(?:the\s+)?(?:content|text))\s+"
            rf"(?:the\s+(?:word|text|string)\s+)?[{_QUOTE}](?P<text>[^{_QUOTE}\n]+)[{_QUOTE}]",
            re.I,
        ),
    ]

    def match(self, instruction: str) -> dict[str, Any] | None:
        for pattern in self._patterns:
            m = pattern.search(instruction)
            if m and ("/" in m["path"] or "." in m["path"]):
                return {"text": m["text"], "path": _clean_path(m["path"])}
        return None

    def solve(self, instruction: str, found: dict[str, Any]) -> Episode:
        path, text = found["path"], found["text"]
        yield Plan(
            [WriteFileAction(path=path, content=text + "\n")], f"The task asks for {text!r} in {path}; write it."
        )
        check = yield Plan([RunAction(command=f"cat -- {shlex.quote(path)}")], "Check the file.")
        ok = bool(check) and check[0].output.splitlines()[:1] == [text]
        yield Plan(
            [
                FinishAction(
                    message=f"Wrote {text!r} to {path}."
                    if ok
                    else f"Wrote {path}, but it does not read back as expected."
                )
            ],
            "Done.",
        )


# -- fix a known function --------------------------------------------------------------------

PATCH_SCRIPT = r'''"""Replace the body of one function in a Python file, keeping signature and docstring."""
import ast, sys

path, name, body_file = sys.argv[1], sys.argv[2], sys.argv[3]
source = open(path).read()
lines = source.splitlines(keepends=True)
tree = ast.parse(source)
target = None
for node in ast.walk(tree):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
        target = node
        break
if target is None:
    sys.exit(f"no function {name!r} in {path}")
params = [a.arg for a in target.args.posonlyargs + target.args.args if a.arg not in ("self", "cls")]
if target.args.vararg:
    params.append(target.args.vararg.arg)
body = open(body_file).read().format(*params)
first = target.body[0]
has_doc = isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant) and isinstance(first.value.value, str)
start = (first.end_lineno if has_doc else first.lineno - 1)  # 0-based index of the first line to replace
end = target.end_lineno  # exclusive, 0-based
indent = " " * first.col_offset
new_body = "".join(indent + line if line.strip() else line for line in body.splitlines(keepends=True))
lines[start:end] = [new_body]
open(path, "w").write("".join(lines))
compile(open(path).read(), path, "exec")
print(f"patched {name}({', '.join(params)}) in {path}")
'''  # noqa: E501


class FixFunction(Recipe):
    """ "Fix `median` in `/app/stats_utils.py`": swap in a known-correct implementation, then check."""

    name = "fix_function"
    _patterns = [
        re.compile(rf"\bfix\s+(?:the\s+)?`?(?P<func>[A-Za-z_]\w*)`?(?:\(\))?\s+(?:function\s+)?in\s+{_PATH}", re.I),
        re.compile(
            rf"`(?P<func>[A-Za-z_]\w*)`(?:\(\))?\s+(?:function\s+)?in\s+{_PATH}\s+(?:is|returns|gives)\s+(?:wrong|buggy|broken|incorrect)",
            re.I,
        ),
    ]
    _command = re.compile(r"`((?:cd\s+[^`&]+&&\s*)?python3?\s+[^`]+)`")

    def match(self, instruction: str) -> dict[str, Any] | None:
        for pattern in self._patterns:
            for m in pattern.finditer(instruction):
                func, path = m["func"], _clean_path(m["path"])
                if func in REFERENCE_BODIES and path.endswith(".py"):
                    return {"func": func, "path": path, "commands": self._command.findall(instruction)}
        return None

    def solve(self, instruction: str, found: dict[str, Any]) -> Episode:
        func, path = found["func"], found["path"]
        folder = posixpath.dirname(path) or "."
        module = posixpath.splitext(posixpath.basename(path))[0]
        read = yield Plan([ReadFileAction(path=path)], f"Read {path} to see how {func} is written.")
        if not read or read[0].error or f"def {func}" not in read[0].output:
            yield Plan(
                [FinishAction(message=f"{path} has no function {func}; cannot apply the known fix.")],
                "Give up.",
                {"intent": "recipe_failed"},
            )
            return
        yield Plan(
            [RunAction(command=f"grep -rn --include='*.py' {shlex.quote(func)} {shlex.quote(folder)} | head -20")],
            f"See where {func} is used before changing it.",
        )
        body_file = f"/tmp/autoenv_{func}_body.txt"
        patch = yield Plan(
            [
                WriteFileAction(path="/tmp/autoenv_patch.py", content=PATCH_SCRIPT),
                WriteFileAction(path=body_file, content=REFERENCE_BODIES[func]),
                RunAction(command=f"python3 /tmp/autoenv_patch.py {shlex.quote(path)} {func} {body_file}"),
            ],
            f"Replace the body of {func} with a correct implementation (sort a copy, handle empty input), keeping its "
            f"signature and docstring.",
        )
        if not patch or patch[-1].exit_code != 0:
            yield Plan([FinishAction(message=f"Patching {func} failed.")], "Give up.", {"intent": "recipe_failed"})
            return
        probe = _PROBES.get(func)
        if probe:
            yield Plan(
                [
                    RunAction(
                        command=f"cd {shlex.quote(folder)} && python3 -c {shlex.quote(probe.format(module=module))}"
                    )
                ],
                f"Try {func} on a few inputs, including ones the old code got wrong.",
            )
        for command in found["commands"][:2]:
            yield Plan([RunAction(command=command, timeout_sec=120)], "Run the command the task mentions.")
        yield from find_tests_and_run()
        yield Plan([FinishAction(message=f"Fixed {func} in {path}.")], "The function now behaves as specified.")


_PROBES = {
    "median": "import {module} as m; print(m.median([3, 1, 2]), m.median((4, 1, 3, 2)), m.median([-5.5, 2, 2]))",
    "mean": "import {module} as m; print(m.mean([1, 2, 3, 4]), m.mean((2.5,)))",
    "factorial": "import {module} as m; print([m.factorial(k) for k in range(6)])",
    "is_prime": "import {module} as m; print([k for k in range(30) if m.is_prime(k)])",
    "gcd": "import {module} as m; print(m.gcd(12, 18), m.gcd(0, 5), m.gcd(-4, 6))",
}


# -- text classification -------------------------------------------------------------------

NB_SCRIPT = r'''"""Multinomial naive Bayes (word unigrams and bigrams) with a held-out accuracy estimate."""
import csv, math, random, re, sys
from collections import Counter, defaultdict

train_path, test_path, out_path = sys.argv[1:4]

def read(path):
    delim = "\t" if path.endswith((".tsv", ".tab")) else ","
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter=delim, quoting=csv.QUOTE_NONE if delim == "\t" else csv.QUOTE_MINIMAL))
    return [h.strip().lower() for h in rows[0]], [r for r in rows[1:] if r]

def column(header, names, rows, exclude=()):
    for name in names:
        if name in header and header.index(name) not in exclude:
            return header.index(name)
    widths = [(sum(len(r[i]) for r in rows if i < len(r)), i) for i in range(len(header)) if i not in exclude]
    return max(widths)[1]

def tokens(text):
    words = re.findall(r"[a-z0-9\u00a3$\u20ac]+|[!?+]", text.lower())
    return words + [a + "_" + b for a, b in zip(words, words[1:])]

def train(rows):
    counts, docs, vocab = defaultdict(Counter), Counter(), set()
    for label, text in rows:
        docs[label] += 1
        toks = tokens(text)
        counts[label].update(toks)
        vocab.update(toks)
    totals = {k: sum(v.values()) for k, v in counts.items()}
    n = sum(docs.values())
    def predict(text):
        toks = [t for t in tokens(text) if t in vocab]
        best = None
        for label in sorted(docs):
            score = math.log(docs[label] / n) + sum(math.log((counts[label][t] + 1) / (totals[label] + len(vocab))) for t in toks)
            if best is None or score > best[0]:
                best = (score, label)
        return best[1]
    return predict

header, rows = read(train_path)
li = column(header, ["label", "class", "category", "target", "y"], rows)
ti = column(header, ["text", "message", "sms", "body", "content", "review", "sentence"], rows, exclude=(li,))
data = [(r[li].strip(), r[ti]) for r in rows if len(r) > max(li, ti)]
shuffled = data[:]
random.Random(0).shuffle(shuffled)
cut = max(1, len(shuffled) // 5)
held = train(shuffled[cut:])
acc = sum(held(t) == y for y, t in shuffled[:cut]) / cut
print(f"labels {sorted(set(y for y, _ in data))}; held-out accuracy {acc:.3f} on {cut} rows")
model = train(data)
theader, trows = read(test_path)
tti = column(theader, ["text", "message", "sms", "body", "content", "review", "sentence"], trows, exclude=(theader.index("id"),) if "id" in theader else ())
preds = [model(r[tti]) for r in trows]
with open(out_path, "w") as f:
    f.write("\n".join(preds) + "\n")
print(f"wrote {len(preds)} predictions to {out_path}")
'''  # noqa: E501


class TextClassifier(Recipe):
    """Train/test text files and a predictions file: naive Bayes, checked on held-out rows."""

    name = "text_classifier"
    _paths = re.compile(r"(/[\w.-]+(?:/[\w.-]+)*\.(?:tsv|csv|txt))")

    def match(self, instruction: str) -> dict[str, Any] | None:
        paths = list(dict.fromkeys(self._paths.findall(instruction)))
        train = next((p for p in paths if "train" in posixpath.basename(p) and p.endswith((".tsv", ".csv"))), None)
        test = next((p for p in paths if "test" in posixpath.basename(p) and p.endswith((".tsv", ".csv"))), None)
        out = next((p for p in paths if "pred" in posixpath.basename(p)), None)
        if train and test and out and re.search(r"classif|spam|label|predict", instruction, re.I):
            return {"train": train, "test": test, "out": out}
        return None

    def solve(self, instruction: str, found: dict[str, Any]) -> Episode:
        train, test, out = found["train"], found["test"], found["out"]
        qt, qs, qo = shlex.quote(train), shlex.quote(test), shlex.quote(out)
        yield Plan(
            [RunAction(command=f"head -n 3 {qt}; echo; head -n 3 {qs}; echo; wc -l {qt} {qs}")],
            "Look at the data layout (header, label column, text column).",
        )
        run = yield Plan(
            [
                WriteFileAction(path="/tmp/autoenv_nb.py", content=NB_SCRIPT),
                RunAction(command=f"python3 /tmp/autoenv_nb.py {qt} {qs} {qo}", timeout_sec=300),
            ],
            "Train a naive Bayes model on word unigrams and bigrams, estimate accuracy on held-out rows, and predict "
            "the test set.",
        )
        if not run or run[-1].exit_code != 0:
            yield Plan([FinishAction(message="Training failed.")], "Give up.", {"intent": "recipe_failed"})
            return
        yield Plan(
            [RunAction(command=f"wc -l {qo} && sort {qo} | uniq -c")],
            "Check the predictions file has one line per test row.",
        )
        yield Plan([FinishAction(message=f"Wrote predictions to {out}.")], "Done.")


# -- backup rotation -----------------------------------------------------------------------

ROTATE_SCRIPT = r"""#!/usr/bin/env bash
# Keep the KEEP newest backups of BACKUP_DIR (age from the timestamp in the name); print what goes.
set -u
usage() { echo "usage: $0 [--dry-run] BACKUP_DIR KEEP" >&2; exit 2; }
dry=0
if [ "${1-}" = "--dry-run" ]; then dry=1; shift; fi
[ $# -eq 2 ] || usage
dir=$1
keep=$2
[[ $keep =~ ^[0-9]+$ ]] || { echo "KEEP must be a non-negative integer, got: $keep" >&2; exit 2; }
[ -d "$dir" ] || { echo "not an existing directory: $dir" >&2; exit 2; }
keep=$((10#$keep))
names=()
for path in "$dir"/*; do
  name=${path##*/}
  [ -f "$path" ] && [ ! -L "$path" ] || continue
  [[ $name =~ ^"__PREFIX__"[0-9]{8}-[0-9]{6}"__SUFFIX__"$ ]] || continue
  names+=("$name")
done
(( ${#names[@]} > keep )) || exit 0
mapfile -t sorted < <(printf '%s\n' "${names[@]}" | LC_ALL=C sort)
drop=$(( ${#sorted[@]} - keep ))
for (( i = 0; i < drop; i++ )); do
  name=${sorted[i]}
  if (( ! dry )); then rm -f -- "$dir/$name" || exit 1; fi
  printf '%s\n' "$name"
done
"""

ROTATE_CHECK = r"""set -u
t=$(mktemp -d)/"dir with space"; mkdir -p "$t/sub"
for ts in 20240101-000000 20240102-000000 20240103-000000; do : > "$t/__PREFIX__${ts}__SUFFIX__"; done
: > "$t/__PREFIX__20230101-000000__SUFFIX__.part"; : > "$t/other.txt"
echo "dry-run:"; __SCRIPT__ --dry-run "$t" 1; echo "left: $(ls "$t" | wc -l)"
echo "real:"; __SCRIPT__ "$t" 1; ls "$t"
u=$(mktemp -d)
for args in "" "$u" "$u x" "$u -1" "/nonexistent 1" "$u 1 --dry-run"; do __SCRIPT__ $args >/dev/null 2>&1; echo "args [$args] -> exit $?"; done
"""  # noqa: E501


class BackupRotation(Recipe):
    """A rotation script that keeps the N newest ``PREFIX-YYYYMMDD-HHMMSS.SUFFIX`` backups."""

    name = "backup_rotation"
    _script = re.compile(r"`(/[\w./-]+\.sh)`")
    _pattern = re.compile(r"`([\w.-]*?)YYYYMMDD-HHMMSS([\w.-]*)`")
    _apply = re.compile(r"apply (?:your|the) script to `?(/[\w./ -]+?)`?,? keeping the (\d+) newest", re.I)

    def match(self, instruction: str) -> dict[str, Any] | None:
        if not re.search(r"backup", instruction, re.I) or "--dry-run" not in instruction:
            return None
        script, pattern = self._script.search(instruction), self._pattern.search(instruction)
        if not script or not pattern:
            return None
        applied = self._apply.search(instruction)
        return {
            "script": script[1],
            "prefix": pattern[1],
            "suffix": pattern[2],
            "apply": (applied[1], int(applied[2])) if applied else None,
        }

    def solve(self, instruction: str, found: dict[str, Any]) -> Episode:
        script = found["script"]
        body = ROTATE_SCRIPT.replace("__PREFIX__", found["prefix"]).replace("__SUFFIX__", found["suffix"])
        if found["apply"]:
            yield Plan(
                [RunAction(command=f"ls -la {shlex.quote(found['apply'][0])}")], "See what the backup folder holds."
            )
        made = yield Plan(
            [
                WriteFileAction(path=script, content=body),
                RunAction(command=f"chmod +x {shlex.quote(script)} && bash -n {shlex.quote(script)}"),
            ],
            "Write the rotation script: select backups by exact name, sort by the timestamp in the name, delete all "
            "but the newest.",
        )
        if not made or made[-1].exit_code != 0:
            yield Plan([FinishAction(message="The script does not parse.")], "Give up.", {"intent": "recipe_failed"})
            return
        check = (
            ROTATE_CHECK.replace("__PREFIX__", found["prefix"])
            .replace("__SUFFIX__", found["suffix"])
            .replace("__SCRIPT__", shlex.quote(script))
        )
        yield Plan(
            [RunAction(command=check)], "Try it on a scratch folder with spaces in its path, then the usage errors."
        )
        if found["apply"]:
            folder, keep = found["apply"]
            yield Plan(
                [RunAction(command=f"{shlex.quote(script)} {shlex.quote(folder)} {keep} && ls {shlex.quote(folder)}")],
                f"Apply it to {folder}, keeping {keep}.",
            )
        yield Plan([FinishAction(message=f"Wrote {script}.")], "Done.")


RECIPES: list[Recipe] = [FixFunction(), TextClassifier(), BackupRotation(), WriteLiteral()]


@functools.cache
def all_recipes() -> tuple[Recipe, ...]:
    """The task families' recipes (:func:`autoenv.families.registry.recipes`), then the generic ones above.

    Family recipes go first: they match only their own families'
    instructions, while the generic ones (write a literal, ...) would also match some of theirs.
    """
    generic = {type(r).__name__ for r in RECIPES}
    return (*(r for r in recipes() if type(r).__name__ not in generic), *RECIPES)


def match_recipe(instruction: str) -> tuple[Recipe, dict[str, Any]] | None:
    for recipe in all_recipes():
        found = recipe.match(instruction)
        if found is not None:
            return recipe, found
    return None
