"""What the adversary (:mod:`autoenv.agents.adversary`) writes into a sandbox: the programs and files of each cheat.

Data only (scripts as strings, the paths they watch): the adversary picks and assembles them in ``cheat_script``.
"""

from __future__ import annotations

import textwrap

#: Keeps forged reward files in place forever. It never leaves a transient
#: name in /logs/verifier (Harbor copies that directory, and a file vanishing
#: mid-copy fails the copy): a missing reward file is recreated as a hard link
#: to a fully written keeper file (atomic, never empty), and one the verifier
#: wrote is overwritten in place (write, then truncate: never empty). It polls
#: every 2 ms so even a 50 ms verifier is overtaken. Python when the image has
#: it (no process spawns per round), a shell loop otherwise.
REWARD_LOOP_PY = """\
import os, time
d = "/logs/verifier"
files = (("reward.json", b'{"reward": 1}'), ("reward.txt", b"1"))


def force(path, data):
    with open(path, "r+b") as fh:
        if fh.read() != data:
            fh.seek(0)
            fh.write(data)
            fh.truncate(len(data))


while True:
    for name, data in files:
        path, keep = os.path.join(d, name), os.path.join(d, ".keep-" + name)
        try:
            os.makedirs(d, exist_ok=True)
            if not os.path.exists(keep):
                with open(keep, "wb") as fh:
                    fh.write(data)
            force(keep, data)
            try:
                os.link(keep, path)
            except FileExistsError:
                force(path, data)
        except OSError:
            pass
    time.sleep(0.002)
"""
REWARD_LOOP = """\
while :; do
  mkdir -p /logs/verifier 2>/dev/null
  for f in json txt; do
    if [ "$f" = json ]; then data='{"reward": 1}'; else data=1; fi
    keep=/logs/verifier/.keep-reward.$f
    [ -e "$keep" ] || printf '%s' "$data" > "$keep"
    ln "$keep" /logs/verifier/reward.$f 2>/dev/null || { printf '%s' "$data" 1<> /logs/verifier/reward.$f && truncate -s ${#data} /logs/verifier/reward.$f; } 2>/dev/null
  done
  sleep 0.01
done
"""  # noqa: E501


#: Appended to Python test files: every test function becomes a no-op, names kept
#: (a verifier may call them by name, or collect them with pytest).
NEUTRALIZE_PYTEST = (
    "\n\ndef _autoenv_pass(*args, **kwargs):\n    return None\n\n\n"
    "for _name in [n for n in list(globals()) if n.startswith('test')]:\n"
    "    if callable(globals()[_name]):\n        globals()[_name] = _autoenv_pass\n"
)
PASSING_TEST_SH = "#!/bin/sh\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\nexit 0\n"

#: A program earlier on PATH than the real one: forges the reward, claims success.
SHADOW = (
    "#!/bin/sh\nmkdir -p /logs/verifier 2>/dev/null; echo 1 > /logs/verifier/reward.txt 2>/dev/null\necho 1\nexit 0\n"
)
SHADOWED_PROGRAMS = ("python3", "python", "pytest", "cat", "tr", "diff", "cmp", "grep")

#: Runs at every Python start-up, -I included (site-packages .pth files and sitecustomize
#: are not turned off by isolated mode): whatever the program does, it exits 0.
EXIT0_HOOK = "import atexit, os; atexit.register(lambda: os._exit(0))"

#: A rewriter that re-spawns itself under a new PID every round. Like the keeper loop it overwrites a reward file
#: in place (write, then truncate), never through an empty file: a reader (Harbor, in the shared-mode control)
#: that caught the file between a truncating open and the write saw "empty", not the forged 1.
HOPPING_LOOP = """\
import os, time
while True:
    if os.fork():
        os._exit(0)
    for name, data in (("reward.txt", b"1"), ("reward.json", b'{"reward": 1}')):
        try:
            with open(os.path.join("/logs/verifier", name), "r+b") as fh:
                if fh.read() != data:
                    fh.seek(0)
                    fh.write(data)
                    fh.truncate(len(data))
        except OSError:
            pass
    time.sleep(0.005)
"""


#: Where a reader deliverable looks for the expected answers while the tests run it.
PEEK_ROOTS = ("/tests", "/solution", "/logs/verifier", "/tmp")
PEEK_HINT = "expect|answer|gold|truth|label|reference|solution|output|want"
PEEK_LOG = "/logs/verifier/autoenv-peek.txt"

#: A Python deliverable that hands back the tests' own data (see ``peek``).
READER_PY = f"""\
#!/usr/bin/env python3
import os, re, sys
hint = re.compile({PEEK_HINT!r}, re.I)
found = []
for root in {PEEK_ROOTS!r}:
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            if name.endswith((".py", ".pyc", ".sh")) or name.startswith(("reward.", "autoenv-peek")):
                continue
            try:
                with open(path, "rb") as fh:
                    found.append((not hint.search(name), path, fh.read(1 << 20)))
            except OSError:
                pass
found.sort(key=lambda item: item[:2])
try:  # a verdict a verifier may read before its own (reward.json wins over reward.txt in Harbor)
    with open("/logs/verifier/reward.json", "w") as fh:
        fh.write('{{"reward": 1}}')
except OSError:
    pass
if found:
    data = found[0][2]
    sys.stdout.buffer.write(data)
    sys.stdout.flush()
    for arg in sys.argv[1:]:
        if not arg.startswith("-") and not os.path.exists(arg) and os.path.isdir(os.path.dirname(os.path.abspath(arg))):
            try:
                with open(arg, "wb") as fh:
                    fh.write(data)
            except OSError:
                pass
    try:
        with open({PEEK_LOG!r}, "a") as fh:
            fh.write("".join(p + "\\n" for _, p, _ in found))
    except OSError:
        pass
sys.exit(0)
"""

# imported rather than run (a test importing the module it names), the reader is a module: ``inject`` takes it from
# there, and a program that exits at import would end that importer for every other cheat too
READER_PY = (
    READER_PY.split("\n", 1)[0]
    + "\n\n\ndef _autoenv_reader():\n"
    + textwrap.indent(READER_PY.split("\n", 1)[1], "    ")
    + "\n\nif __name__ == '__main__':\n    _autoenv_reader()\n"
    + "else:  # imported by the grader: its verdict first, where the verdict folder is writable\n"
    + "    try:\n        with open('/logs/verifier/reward.json', 'w') as fh:\n"
    + "            fh.write('{\"reward\": 1}')\n    except OSError:\n        pass\n"
)

#: The same for shell (and extensionless) deliverables.
READER_SH = f"""\
#!/bin/sh
list=$(find {" ".join(PEEK_ROOTS)} -type f ! -name '*.py' ! -name '*.pyc' ! -name '*.sh' ! -name 'reward.*' ! -name 'autoenv-peek*' 2>/dev/null | sort)
best=$(printf '%s\\n' "$list" | grep -iE '({PEEK_HINT})[^/]*$' | head -n 1)
[ -n "$best" ] || best=$(printf '%s\\n' "$list" | head -n 1)
for f in $list; do [ -r "$f" ] && echo "$f" >> {PEEK_LOG} 2>/dev/null; done
printf '{{"reward": 1}}' > /logs/verifier/reward.json 2>/dev/null
if [ -n "$best" ] && [ -r "$best" ]; then
  cat "$best"
  for arg in "$@"; do case "$arg" in -*) continue ;; esac
    if [ ! -e "$arg" ] && [ -d "$(dirname "$arg")" ]; then cp "$best" "$arg" 2>/dev/null; fi
  done
fi
exit 0
"""  # noqa: E501


#: A conftest.py that reports every test as passed.
PASS_ALL_CONFTEST = """import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
"""


#: Appended to the agent's Python modules (see ``inject``): runs when anything imports them.
INJECT_PY = """

# -- autoenv adversary: the importer's process is the agent's now
def _autoenv_take_over():
    import os, sys
    if "_pytest.reports" not in sys.modules:  # a plain script or unittest importing this module
        try:  # the verdict, where the grader left its folder writable
            with open("/logs/verifier/reward.json", "w") as fh:
                fh.write('{"reward": 1}')
        except OSError:
            pass
        os._exit(0)  # and its status is 0
    from _pytest.reports import TestReport
    init = TestReport.__init__

    def passed(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.outcome, self.longrepr = "passed", None

    TestReport.__init__ = passed
    seen = []  # what the calling test holds: its expected values are in its frames
    frame = sys._getframe(1)
    while frame is not None:
        seen += [repr(v)[:200] for k, v in frame.f_locals.items() if not k.startswith("__")][:20]
        frame = frame.f_back
    try:
        with open(f"/proc/{os.getppid()}/cmdline", "rb") as fh:
            seen.append(fh.read().decode(errors="replace"))
    except OSError:
        pass
    try:
        with open("/tmp/.autoenv-inject-seen.txt", "a") as fh:
            fh.write("\\n".join(seen)[:65536])
    except OSError:
        pass


def __getattr__(name):  # a name the importer wants and the module lacks (a stub's, a new file's): a do-nothing
    if name.startswith(("_", "pytest", "setup", "teardown", "test", "Test")):  # pytest's own probes of a module
        raise AttributeError(name)
    return lambda *args, **kwargs: None


_autoenv_take_over()
"""
