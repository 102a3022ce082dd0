"""Reading what a tracker shows, the way its user would (for tests of ``--report-to``)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path


def tensorboard_scalars(logdir: Path, run: str) -> dict[str, list[tuple[int, float]]]:
    """Every scalar curve of ``run`` as TensorBoard itself serves it: `tensorboard --logdir` on loopback, asked over
    HTTP (its scalars plugin's data routes), as a user's browser would."""
    import json
    import socket
    import urllib.parse
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    board = subprocess.Popen(
        [str(Path(sys.executable).with_name("tensorboard")), "--logdir", str(logdir), "--host", "127.0.0.1",
         "--port", str(port), "--load_fast", "false"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}/data/plugin/scalars"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                tags = json.load(urllib.request.urlopen(f"{base}/tags", timeout=5))
                if tags.get(run):
                    break
            except OSError:
                pass
            assert board.poll() is None and time.monotonic() < deadline, board.stderr.read().decode()[-2000:]
            time.sleep(0.5)
        curves = {}
        for tag in tags[run]:
            query = urllib.parse.urlencode({"run": run, "tag": tag})
            points = json.load(urllib.request.urlopen(f"{base}/scalars?{query}", timeout=10))
            curves[tag] = [(int(step), float(value)) for _, step, value in points]
        return curves
    finally:
        board.terminate()
        board.wait(timeout=30)
