"""Verifier and reference-solution templates of the office/web task families.

Each file is copied into generated tasks (``tests/test_outputs.py``,
``solution/solve.py``, ``solution/pick.py``) with the task's constants
substituted for the ``CASE`` line (see
:func:`autoenv.proposer.office.common.verifier_source`). Verifiers import
their helper modules (``formula_eval``, ``docx_format``) as top-level modules
from their own folder, where the generator copies them.
"""
