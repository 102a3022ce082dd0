"""A terminal agent for Harbor whose decisions come from a pluggable policy.

Load it in Harbor with ``import_path = "autoenv.agents.terminal:TerminalAgent"``
(``harbor run --agent-import-path ...``), or through autoenv with
``--agent terminal``. The policy is ``scripted`` (offline, default) or
``openai`` (any OpenAI-compatible endpoint).

Why not terminus-2? It drives a tmux session inside the sandbox (tmux must
be installable there, and our offline sandboxes cannot install it) and its
observations are screen scrapes whose boundaries do not line up with
actions. Here every action is one ``environment.exec`` whose output belongs
to exactly that action, which is what a per-turn RL record needs. What
terminus-2 established is kept: ATIF ``trajectory.json`` in ``logs_dir``,
token ids and log-probs in each step's ``Metrics``, and
``AgentContext.rollout_details`` with one entry per LLM turn.

Every turn is recorded before the next one starts. A reply that is not a
valid action is recorded and fed back to the policy; a policy that cannot be
reached (bad URL, bad key, endpoint errors after retries) is recorded in the
trajectory and in ``context.metadata`` and then raised, so the trial ends as
an infrastructure error rather than a zero reward.
"""

from __future__ import annotations

from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any, Literal

from harbor.agents.agent_auth_resolution import ResolvedModelConnection
from harbor.agents.base import BaseAgent
from harbor.agents.capabilities import AgentCapabilities
from harbor.agents.options import AgentOptions
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext
from pydantic import ConfigDict, Field

from autoenv.agents.policies import make_policy
from autoenv.agents.policies.base import Policy, PolicyConfigError
from autoenv.agents.terminal_run import TerminalRun
from autoenv.vocab import SolverPolicy


class TerminalAgentOptions(AgentOptions):
    """Agent kwargs (``--ak KEY=VALUE``, ``AgentConfig.kwargs``); strings are coerced."""

    model_config = ConfigDict(extra="forbid")

    policy: SolverPolicy = Field(
        default=SolverPolicy.SCRIPTED,
        description="Who decides: scripted (offline), learned (offline, a trained preference table) or openai (an "
        "endpoint).",
    )
    table: str | None = Field(
        default=None,
        description="learned: the policy table (table.json or a checkpoint folder); unset: untrained (uniform).",
    )
    seed: int | None = Field(
        default=None, description="Scripted: the RNG seed. openai: per-request sampling seed base."
    )
    success_rate: float = Field(
        default=1.0, ge=0.0, le=1.0, description="Scripted: probability of attempting the task at all."
    )
    max_turns: int = Field(default=30, ge=1, description="Policy replies per episode.")
    max_tokens: int | None = Field(default=None, ge=1, description="openai: generation limit per reply.")
    token_budget: int | None = Field(default=None, ge=1, description="openai: prompt+completion tokens per episode.")
    max_wall_sec: float | None = Field(
        default=None, gt=0, description="Wall time per episode (Harbor's agent timeout still applies)."
    )
    command_timeout_sec: float = Field(default=120.0, gt=0, description="Limit for one action.")
    max_output_chars: int = Field(
        default=10_000, ge=200, description="Observations are cut to this many characters (head and tail kept)."
    )
    max_invalid_replies: int = Field(
        default=3, ge=1, description="Consecutive unusable replies before the episode ends."
    )
    temperature: float | None = Field(default=None, ge=0.0, description="openai: sampling temperature.")
    policy_version: str | None = Field(
        default=None,
        description="Label of the weights that produce the turns (overridden by the server's x-policy-version header).",
    )
    tool_mode: Literal["auto", "tools", "text"] = Field(
        default="auto", description="openai: tool calling, plain-text actions, or tools with a text fallback."
    )
    rollout_details: bool = Field(default=True, description="openai: request token ids and log-probs.")
    max_retries: int = Field(default=4, ge=0, description="openai: retries on 429/5xx/timeouts.")
    retry_base_sec: float = Field(default=1.0, ge=0.0, description="openai: first backoff delay (doubles per retry).")
    request_timeout_sec: float = Field(default=300.0, gt=0, description="openai: per-request timeout.")


class TerminalAgent(BaseAgent):
    capabilities = AgentCapabilities(base_url=True, atif=True)
    options_model = TerminalAgentOptions
    options: TerminalAgentOptions

    def __init__(
        self,
        logs_dir: Path,
        model_name: str | None = None,
        *args: Any,
        base_url: str | None = None,
        model_api_key_name: str | None = None,
        model_api_format: str | None = None,
        **kwargs: Any,
    ):
        # The endpoint is called from the host by our own client, so Harbor's
        # in-sandbox connection projection (MODEL_CONNECTION) does not apply.
        fmt = getattr(model_api_format, "value", model_api_format)
        if fmt not in (None, "openai-chat-completions"):
            raise ValueError(
                f"{self.name()} speaks only OpenAI chat completions (openai-chat-completions), not {fmt!r}"
            )
        super().__init__(logs_dir, model_name, *args, **kwargs)
        self._base_url = base_url
        self._api_key_name = model_api_key_name
        self.options = self.options.model_copy(update={"base_url": base_url})

    @staticmethod
    def name() -> str:
        return "autoenv-terminal"

    def version(self) -> str | None:
        try:
            return importlib_metadata.version("autoenv")
        except importlib_metadata.PackageNotFoundError:
            return None

    @classmethod
    def resolve_model_connection_config(
        cls, model_name: str | None, resolve_env: Any, **options: Any
    ) -> ResolvedModelConnection:
        """Report the endpoint for Harbor's preflight without routing it through the sandbox."""
        url = options.get("base_url")
        return ResolvedModelConnection(
            provider="openai" if model_name else None,
            candidate_base_url=url,
            user_supplied_base_url=url,
            resolved_base_url=url,
            can_configure_base_url=True,
        )

    @classmethod
    def _parse_model_name_for_connection(
        cls, model_name: str, *, skip_model_parsing: bool = False
    ) -> tuple[str | None, str]:
        # Served model ids ("Qwen/Qwen3-8B", "openai/gpt-oss-20b") are sent verbatim;
        # LiteLLM's provider parsing would also cost seconds of import time.
        return "openai", model_name

    async def setup(self, environment: BaseEnvironment) -> None:
        """Nothing to install: the agent runs on the host and acts through ``exec``."""

    # -- policy ------------------------------------------------------------------------

    def _make_policy(self) -> Policy:
        o = self.options
        if o.policy == SolverPolicy.SCRIPTED:
            return make_policy(
                SolverPolicy.SCRIPTED, seed=o.seed, success_rate=o.success_rate, policy_version=o.policy_version
            )
        if o.policy == SolverPolicy.LEARNED:
            return make_policy(SolverPolicy.LEARNED, seed=o.seed, table=o.table, policy_version=o.policy_version)
        api_key = self._get_env(self._api_key_name) if self._api_key_name else self._get_env("OPENAI_API_KEY")
        if self._api_key_name and not api_key:
            raise PolicyConfigError(f"{self._api_key_name} (model_api_key_name) is not set")
        return make_policy(
            SolverPolicy.OPENAI,
            model=self.model_name,
            base_url=self._base_url or self._get_env("OPENAI_BASE_URL"),
            api_key=api_key,
            temperature=o.temperature,
            max_tokens=o.max_tokens,
            tool_mode=o.tool_mode,
            rollout_details=o.rollout_details,
            policy_version=o.policy_version,
            seed=o.seed,
            max_retries=o.max_retries,
            retry_base_sec=o.retry_base_sec,
            request_timeout_sec=o.request_timeout_sec,
        )

    # -- the loop ----------------------------------------------------------------------

    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        episode = TerminalRun(self, instruction, environment, context)
        await episode.play()
