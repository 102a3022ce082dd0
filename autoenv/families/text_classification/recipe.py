"""text-classification above level 1: naive Bayes on a layout read from the files; level 1 is the scripted policy's
generic ``text_classifier`` recipe.

``files/solver_program.py`` finds the label column from the sample submission's header and the text column as the
training file's longest one, normalises the labels, trains multinomial naive Bayes (unigrams and bigrams) and labels
the test file, or the file the command line names (levels 3 and 4 ask for it as ``/app/predict.py``). It is also
the levels' reference program (one text). Its ``difficulty`` is the level's skill key.
"""

from __future__ import annotations

from typing import Any

from autoenv.families.levels import climbing
from autoenv.families.solver import ProgramRecipe
from autoenv.families.text_classification.generator import LADDER
from autoenv.families.text_classification.ladder import PROGRAM


class HelpDeskClassifierRecipe(ProgramRecipe):
    name = "helpdesk_classifier"
    ladder = LADDER
    #: It reads levels 2-4 only (level 1 is the generic ``text_classifier`` recipe's; level 2 needs no phrase).
    level_markers = climbing("", PROGRAM, "rows and allow it")
    markers = ("sample_submission.csv", "Find the files' layout")

    def parse(self, instruction: str) -> dict[str, Any] | None:
        return {
            "inputs": ["/app/data/train.csv", "/app/data/test.csv", "/app/data/sample_submission.csv"],
            "outputs": ["/app/submission.csv"],
            "program_path": PROGRAM if PROGRAM in instruction else None,
        }


RECIPE = HelpDeskClassifierRecipe()
