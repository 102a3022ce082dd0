"""One syntax for every ``name:key=value,...`` option: solvers, trainers and agent kwargs.

``terminal:policy=scripted,success_rate=0.6``, ``coin:p=0.5``, ``oracle``, ``my.mod:Solver:temperature=0.7``,
``trl:lr=1e-4,base=tiny``. Values are read by one rule (:func:`coerce`): true/yes/on and false/no/off are
booleans, none/null is None, integers and floats are numbers, anything else stays text (URLs keep their ':').
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from autoenv.vocab import AUTOENV_AGENTS


def coerce(value: str) -> Any:
    """An option's text as the value it means."""
    lowered = value.lower()
    if lowered in ("true", "yes", "on"):
        return True
    if lowered in ("false", "no", "off"):
        return False
    if lowered in ("none", "null"):
        return None
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


def parse_options(text: str, *, what: str) -> dict[str, Any]:
    """``key=value,...`` as a dict; ``what`` names the option in errors (e.g. "solver spec 'coin:p'")."""
    options: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"{what}: expected key=value, got {item!r}")
        options[key.strip()] = coerce(value.strip())
    return options


def split_spec(
    spec: str, *, known: set[str] | frozenset[str] = frozenset(), what: str = "spec"
) -> tuple[str, dict[str, Any]]:
    """``NAME[:key=value,...]`` or ``module.path:Class[:key=value,...]`` -> (name, options).

    A first part that is not a ``known`` short name and is followed by a word without ``=`` is a module path,
    so ``my.mod:Solver:temperature=0.7`` names ``my.mod:Solver``.
    """
    text = spec.strip()
    if not text:
        raise ValueError(f"empty {what}")
    first, sep, rest = text.partition(":")
    if sep and first not in known and "=" not in rest.split(":")[0]:
        cls, _, options = rest.partition(":")
        name = f"{first}:{cls}"
    else:
        name, options = first, rest
    if not name or name.endswith(":") or name.startswith(":"):
        raise ValueError(f"{what} {spec!r}: missing the name before ':'")
    return name, parse_options(options, what=f"{what} {spec!r}") if options else {}


#: Short solver names that stand for an agent's import path.
SOLVER_ALIASES = {"coin": "autoenv.agents.coin:CoinOracleAgent"}

#: Solvers that take a per-rollout ``seed`` even when the spec does not mention one.
SEEDED_SOLVERS = frozenset({"coin", "terminal"})


class SolverSpec(BaseModel):
    """What solves: an agent (a Harbor name, an autoenv short name or ``module:Class``) with its kwargs."""

    spec: str
    name: str
    agent: str = Field(
        description="what autoenv.trials.runner accepts: a Harbor name, autoenv short name or module:Class"
    )
    kwargs: dict[str, Any] = Field(default_factory=dict)
    env: str = "local"

    @property
    def seeded(self) -> bool:
        return self.name in SEEDED_SOLVERS or "seed" in self.kwargs

    @classmethod
    def parse(cls, spec: str, env: str = "local") -> SolverSpec:
        """``oracle``, ``nop``, ``coin:p=0.5``, ``terminal:policy=scripted,success_rate=0.5``,
        ``module.path:Class[:k=v,...]``."""
        if not spec.strip():
            raise ValueError(
                "empty solver spec; use e.g. oracle, nop, coin:p=0.5, terminal:policy=scripted or module:Class"
            )
        name, kwargs = split_spec(
            spec, known=AUTOENV_AGENTS.keys() | SOLVER_ALIASES.keys() | {"oracle", "nop"}, what="solver spec"
        )
        agent = SOLVER_ALIASES.get(name, name)
        if ":" not in agent and agent not in AUTOENV_AGENTS and not agent.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"solver spec {spec!r}: {name!r} is neither a short name nor module:Class")
        return cls(spec=spec, name=name, agent=agent, kwargs=kwargs, env=env)
