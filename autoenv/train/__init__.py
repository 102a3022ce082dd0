"""Training: GRPO advantages, training batches (the export format), backends and the tiny offline policy.

Nothing here imports torch or Harbor at package import: the flywheel (Python
3.12, no torch) and the training worker (``.venv-train``, Python 3.11) share
these modules. See docs/training.md.
"""
