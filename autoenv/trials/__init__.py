"""Harbor trials on any backend (:mod:`autoenv.trials.runner`), the cluster runner and the machine checks.

This module stays free of Harbor's imports: the CLI reads ``DEFAULT_TRIALS_DIR`` for its options' defaults.
"""

from pathlib import Path

#: Where trial outputs go unless a caller says otherwise.
DEFAULT_TRIALS_DIR = Path("runs") / "trials"
