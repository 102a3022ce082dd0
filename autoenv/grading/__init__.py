"""What a task's verifier runs besides its tests: the agent-call broker (``agentcall.py``, copied into ``tests/``).

The file is task content, not framework code: it runs inside the verifier's sandbox with the image's ``python3``
and the standard library only. :data:`AGENTCALL` is its text, as families and FORMAT.md copy it.
"""

from __future__ import annotations

from pathlib import Path

AGENTCALL_PATH = Path(__file__).with_name("agentcall.py")
AGENTCALL = AGENTCALL_PATH.read_text()

#: The lines of a tests/test.sh that run pytest through the broker: the task's test files (``{files}``) copied
#: into a fresh folder only the grader (uid 65533) can read, pytest as the grader, the agent's code as nobody.
GRADED_PYTEST = (
    "T=$(mktemp -d)\n"
    'cp {files} /tests/agentcall.py "$T"/ && chown -R 65533:65533 "$T" && chmod -R go-rwx "$T" && cd "$T" && \\\n'
    '  python3 -I /tests/agentcall.py grade -- -q -p no:cacheprovider -c /dev/null --rootdir "$T" --noconftest '
    "{targets} -rA\n"
)
