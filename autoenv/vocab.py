"""autoenv's one vocabulary: the closed sets of names that options, configs, the store and reports share.

Every command-line option, config model and report reads these enums (they are ``StrEnum``, so a value
is its string everywhere: in JSON, in the store, in a comparison with text); nothing spells the sets
again. Solver, trainer and agent options are specs (``name:key=value,...``) read by :mod:`autoenv.spec`.
"""

from __future__ import annotations

from enum import StrEnum


class Method(StrEnum):
    """How the proposer writes a task: one shot, with the validator's feedback, as an agent in a sandbox, or as a
    harder variant of a task it is given (``evolve``: ``autoenv propose --from TASK_DIR``)."""

    PROMPT = "prompt"
    FEEDBACK = "feedback"
    AGENTIC = "agentic"
    EVOLVE = "evolve"


class ProposerPolicy(StrEnum):
    """Who proposes: the offline scripted proposer (task families) or a model behind an OpenAI endpoint."""

    SCRIPTED = "scripted"
    OPENAI = "openai"


class SolverPolicy(StrEnum):
    """The terminal agent's policy: scripted recipes, the learned table over them, or a model endpoint."""

    SCRIPTED = "scripted"
    LEARNED = "learned"
    OPENAI = "openai"


class Baseline(StrEnum):
    """What a flywheel run is: the full loop, or one of the baselines it is compared with."""

    AUTOENV = "autoenv"  # propose, calibrate, train proposer and solver
    PROPOSER_OFF = "proposer-off"  # the proposer proposes but is not trained
    STATIC = "static"  # a fixed task set, no proposer


class ReportTo(StrEnum):
    """Where the flywheel sends each step's metrics besides its store (``--report-to``)."""

    NONE = "none"
    TENSORBOARD = "tensorboard"  # event files under OUT/tensorboard/RUN (tensorboard --logdir OUT/tensorboard)
    TRACKIO = "trackio"  # Hugging Face's local-first tracker (trackio show)


class ServeKind(StrEnum):
    """Whether and how the flywheel serves each trained version to the next step's rollouts."""

    NONE = "none"
    CPU = "cpu"  # the training env's CPU server (tiny policies)
    VLLM = "vllm"  # a GPU


class ProposerNetwork(StrEnum):
    """The agentic proposer's sandbox network (a subset of Harbor's ``NetworkMode``)."""

    NO_NETWORK = "no-network"
    PUBLIC = "public"


class Switch(StrEnum):
    ON = "on"
    OFF = "off"


#: The offline solver every command defaults to when no model is at hand: the terminal agent's scripted
#: policy, succeeding on a task it knows with probability 0.6 (so calibration sees a pass/fail mix).
SCRIPTED_SOLVER = "terminal:policy=scripted,success_rate=0.6"


def shared_solver(model: str | None, base_url: str | None) -> str:
    """The solver spec for one shared policy: the proposer's own model answers as the solver too."""
    return (
        "terminal:policy=openai" + (f",model={model}" if model else "") + (f",base_url={base_url}" if base_url else "")
    )


#: autoenv's agents by short name (``--solver terminal:...``, ``adversary``), as Harbor import paths: the solver
#: spec parser reads them here, the trial runner turns them into agent configs.
AUTOENV_AGENTS = {
    "terminal": "autoenv.agents.terminal:TerminalAgent",
    "adversary": "autoenv.agents.adversary:AdversaryAgent",
    "coin": "autoenv.agents.coin:CoinOracleAgent",
    "partial": "autoenv.agents.partial:PartialSolutionAgent",
}


class SftSource(StrEnum):
    """What ``autoenv train sft`` imitates."""

    PROPOSER = "proposer"  # Cold Start: proposer episodes of accepted tasks
    SOLVER = "solver"  # rejection-sampling fine-tuning: solver rollouts with reward 1


class Verdict(StrEnum):
    """What validation says of a task: fit to train on, flawed, or not decidable with what was at hand."""

    VALID = "valid"  # every check passed, and a solution (shipped or found) passed the tests
    INVALID = "invalid"  # a check found a flaw of the task
    UNDETERMINED = "undetermined"  # no flaw found, but something needed to call it valid was missing (see below)


class Undecided(StrEnum):
    """Why a verdict is undetermined: the two families, each with its own way to decide it."""

    NO_SOLUTION = "no-solution"  # no reference solution ran (--no-oracle, no solution/): solvability unknown
    CANNOT_JUDGE = "cannot-judge-here"  # this machine cannot run what the task needs (a stand-in base, no network)
