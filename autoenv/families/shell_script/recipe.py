"""shell-script: read the tally's options from the instruction (or the tool's manual page) and write the script.

Level 1's script reads ``find``'s output line by line; above it the recipe writes the NUL-safe script of
:func:`~autoenv.families.shell_script.ladder.script_body`, and at levels 3 and 4, where the instruction names only
the manual page, a program that reads the option letters, default sort and separator from the manual page and the
report's options from the crontab, then writes the script and runs it. Its ``difficulty`` is the level's skill key,
so each level is a skill of its own to the learned solver.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

from autoenv.families.shell_script.generator import LADDER, SORTS
from autoenv.families.shell_script.ladder import script_body
from autoenv.families.solver import ShellRecipe, first

#: Level 3's program: the manual page and the crontab say what level 1's instruction said.
FROM_MANUAL = r"""
import json, os, re, subprocess
P = json.loads(__PARAMS__)
man = " ".join(open(P["manual"], encoding="utf-8").read().split())
r, a, s = re.search(r"\[-(\w)\] \[-(\w)\] \[-(\w) KEY\] DIR", man).groups()
sort = re.search(r"Default: (count|bytes|ext)\.", man).group(1)
sep = "\t" if "separated by a tab" in man else "," if "separated by a single comma" in man else " "
body = P["template"].replace("__R__", r).replace("__A__", a).replace("__S__", s).replace("__SORT__", sort)
os.makedirs(os.path.dirname(P["script"]), exist_ok=True)
with open(P["script"], "w") as fh:
    fh.write(body.replace("__SEP__", sep))
os.chmod(P["script"], 0o755)
cron = open(P["cron"], encoding="utf-8").read()
flags = re.search(re.escape(P["script"]) + r"((?: -\w(?: (?:count|bytes|ext))?)*) ", cron).group(1).split()
with open("/app/report.txt", "w") as out:
    raise SystemExit(subprocess.run(["bash", P["script"], *flags, "/app/data"], stdout=out).returncode)
"""


class TallyRecipe(ShellRecipe):
    name = "tally_by_extension"
    ladder = LADDER
    #: Levels 3 and 4 no longer spell out level 2's output rule: each level's phrases, not a climb.
    level_markers = (("never a tab or a newline after",), ("manual page",), ("manual page", "seconds on one CPU core"))
    markers = ("by file extension",)

    def parse(self, instruction: str) -> dict[str, Any] | None:
        if self.level_of(instruction) >= 3:
            tool = first(r"`/app/doc/([\w-]+)\.1`", instruction)
            return {
                "level": self.level_of(instruction),
                "script": first(r"runs `(/app/[\w/.-]+\.sh)`", instruction),
                "manual": f"/app/doc/{tool}.1",
                "cron": f"/app/etc/cron.d/{tool}",
                "inputs": [f"/app/doc/{tool}.1", f"/app/etc/cron.d/{tool}"],
                "outputs": ["/app/report.txt"],
            }
        if "summarises a" not in instruction:
            return None
        script = first(r"bash script `(/app/[\w/.-]+\.sh)`", instruction)
        sort = next((key for key in SORTS if f"by `{key}` descending" in instruction), "ext")
        sep = first(r"separated by (a tab|a comma|a single comma|a single space)", instruction)
        return {
            "level": self.level_of(instruction),
            "script": script,
            "recursive": "recursively" in instruction,
            "hidden": "count like any other file" in instruction,
            "sort": sort,
            "sep": "\\t" if sep == "a tab" else "," if "comma" in sep else " ",
            "inputs": [],
            "outputs": ["/app/report.txt"],
        }

    def program(self, p: dict[str, Any]) -> str:
        if p["level"] >= 3:
            template = script_body("__SORT__", "__SEP__", False, False, ("__R__", "__A__", "__S__"))
            params = {k: p[k] for k in ("script", "manual", "cron")} | {"template": template}
            return "python3 - <<'PY'\n" + FROM_MANUAL.replace("__PARAMS__", repr(json.dumps(params))) + "PY\n"
        if p["level"] == 2:
            sep = "\t" if p["sep"] == "\\t" else p["sep"]
            script = script_body(p["sort"], sep, p["recursive"], p["hidden"], None)
        else:
            script = self.plain_script(p)
        return (
            f"mkdir -p \"$(dirname {p['script']})\"\ncat > {p['script']} <<'SH'\n{script}SH\nchmod +x {p['script']}\n"
            f"{p['script']} /app/data > /app/report.txt\n"
        )

    def plain_script(self, p: dict[str, Any]) -> str:
        """Level 1's script: ``find``'s output read line by line (names without newlines)."""
        depth = "" if p["recursive"] else "-maxdepth 1 "
        hidden = "" if p["hidden"] else "! -name '.*' "
        keys = {"count": "-k2,2nr -k1,1", "bytes": "-k3,3nr -k1,1", "ext": "-k1,1"}[p["sort"]]
        return textwrap.dedent(f"""\
            #!/bin/bash
            set -euo pipefail
            if [ "$#" -ne 1 ] || [ ! -d "$1" ]; then echo "usage: $0 DIR" >&2; exit 2; fi
            find "$1" {depth}-type f {hidden}-printf '%f\\t%s\\n' \\
              | awk -F'\\t' '{{ name = $1; if (substr(name, 1, 1) == ".") name = substr(name, 2)
                  n = split(name, parts, "."); ext = (n > 1) ? tolower(parts[n]) : "(none)"
                  count[ext]++; bytes[ext] += $2 }}
                  END {{ for (e in count) printf "%s\\t%d\\t%d\\n", e, count[e], bytes[e] }}' \\
              | LC_ALL=C sort -t "$(printf '\\t')" {keys} \\
              | awk -F'\\t' -v OFS='{p["sep"]}' '{{ print $1, $2, $3 }}'
            """)

    def look(self, params: dict[str, Any]) -> str:
        if params["level"] >= 3:
            return f"ls -la /app /app/data; cat {params['manual']} {params['cron']}"
        return super().look(params)

    def check(self, params: dict[str, Any]) -> str:
        return f'cat /app/report.txt; {params["script"]}; echo "exit $?"'


RECIPE = TallyRecipe()
