"""shell-script: read the tally's options from the instruction and write the bash script the task names."""

from __future__ import annotations

import textwrap
from typing import Any

from autoenv.families.solver import ShellRecipe, first


class TallyRecipe(ShellRecipe):
    name = "tally_by_extension"
    markers = ("summarises a", "by file extension")

    def parse(self, instruction: str) -> dict[str, Any] | None:
        script = first(r"bash script `(/app/[\w/.-]+\.sh)`", instruction)
        sort = (
            "count"
            if "by `count` descending" in instruction
            else "bytes"
            if "by `bytes` descending" in instruction
            else "ext"
        )
        sep = "\\t" if "separated by a tab" in instruction else "," if "separated by a comma" in instruction else " "
        return {
            "script": script,
            "recursive": "recursively" in instruction,
            "hidden": "count like any other file" in instruction,
            "sort": sort,
            "sep": sep,
            "inputs": [],
            "outputs": ["/app/report.txt"],
        }

    def program(self, p: dict[str, Any]) -> str:
        depth = "" if p["recursive"] else "-maxdepth 1 "
        hidden = "" if p["hidden"] else "! -name '.*' "
        keys = {"count": "-k2,2nr -k1,1", "bytes": "-k3,3nr -k1,1", "ext": "-k1,1"}[p["sort"]]
        script = textwrap.dedent(f"""\
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
        return (
            f"mkdir -p \"$(dirname {p['script']})\"\ncat > {p['script']} <<'SH'\n{script}SH\nchmod +x {p['script']}\n"
            f"{p['script']} /app/data > /app/report.txt\n"
        )

    def check(self, params: dict[str, Any]) -> str:
        return f'cat /app/report.txt; {params["script"]}; echo "exit $?"'


RECIPE = TallyRecipe()
