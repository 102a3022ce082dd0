"""Whose fault a trial's outcome is: one table, used by every stage that reads an outcome.

Every outcome lands on one party:

- **the agent** (:attr:`Party.AGENT`): a verdict. The reward counts as the attempt's, 0 when it failed; an agent
  that timed out, passed a bound of its trial (a 20 GB file left behind: ``agent_limit``) or broke its own
  sandbox's exec channel (root in the sandbox can: ``sandbox``/``HelperGone`` after the start) failed its attempt.
- **the task** (:attr:`Party.TASK`): the task is flawed or this backend cannot run it; validation says invalid
  with the reason, rollouts leave it out.
- **the machine** (:attr:`Party.MACHINE`): no sandbox could be built or started for reasons outside the task
  (the runtime, the build network, a full disk, buildah's store). Stages stop (exit 4), record nothing, and a
  rerun resumes: a broken machine is never an invalid task, a failed rollout or a 0 benchmark.
- **the endpoint** (:attr:`Party.ENDPOINT`): the model behind the policy could not be reached; the attempt says
  nothing about the task or the policy, and stages leave it out.

Only faults before any code of the task's or the agent's ran are the machine's: after a sandbox started, root in
it (the agent) or the task's own programs can break what runs there, so such faults never stop a run (a policy
must not be able to halt its own training).
"""

from __future__ import annotations

from enum import StrEnum

from autoenv.errors import MachineError


class Party(StrEnum):
    AGENT = "agent"
    TASK = "task"
    MACHINE = "machine"
    ENDPOINT = "endpoint"


#: Harbor's and autoenv's exception type names -> the short error kind a trial outcome records.
ERROR_KINDS = {
    "SandboxBuildFailedError": "build",
    "BuildError": "build",
    "EnvironmentStartTimeoutError": "build",
    # the sandbox runtime failed after the sandbox started (the agent, root in it, can do this): its failure
    "SandboxError": "sandbox",
    # this machine cannot build or start any sandbox (a program missing, the build network, runc): stages stop
    "MachineError": "machine",
    "SandboxStartError": "machine",
    "AgentTimeoutError": "agent_timeout",
    "AgentSetupTimeoutError": "agent_setup_timeout",
    "VerifierTimeoutError": "verifier_timeout",
    "RewardFileNotFoundError": "reward_missing",
    "RewardFileEmptyError": "reward_missing",
    "VerifierOutputParseError": "reward_invalid",
    # what the agent left passed a bound of the trial (bytes, files, depth, seconds to copy out)
    "TransferLimitExceeded": "agent_limit",
    # the policy endpoint failed: infrastructure, not the task (calibration can exclude these)
    "PolicyConnectionError": "policy_unreachable",
    "PolicyAuthError": "policy_auth",
    "PolicyEndpointError": "policy_endpoint",
    "PolicyConfigError": "policy_config",
}

#: error kind -> whose fault. ``None`` is a trial that ended with a verdict. A kind not listed is a bug of the
#: harness (an exception nobody classified): it is left out like an endpoint fault, never counted as a verdict.
PARTY_OF_KIND: dict[str | None, Party] = {
    None: Party.AGENT,
    "agent_timeout": Party.AGENT,
    "agent_limit": Party.AGENT,
    "reward_missing": Party.AGENT,
    "reward_invalid": Party.AGENT,
    "verifier_timeout": Party.AGENT,
    "sandbox": Party.AGENT,
    "HelperGone": Party.AGENT,
    "build": Party.TASK,
    "invalid_task": Party.TASK,
    "backend_unsupported": Party.TASK,
    "agent_setup_timeout": Party.TASK,
    "machine": Party.MACHINE,
    "endpoint": Party.ENDPOINT,
    "policy_unreachable": Party.ENDPOINT,
    "policy_auth": Party.ENDPOINT,
    "policy_endpoint": Party.ENDPOINT,
    "policy_config": Party.ENDPOINT,
}


def error_kind(exception_type: str | None) -> str | None:
    """The outcome's error kind for an exception type name (unknown names pass through)."""
    if exception_type is None:
        return None
    return ERROR_KINDS.get(exception_type, exception_type)


def party(error: str | None) -> Party | None:
    """Whose fault an outcome with this error kind is; None for a kind nobody classified (a harness bug)."""
    return PARTY_OF_KIND.get(error)


def is_verdict(error: str | None) -> bool:
    """The outcome is the agent's own result: its reward (0 when missing) counts."""
    return party(error) is Party.AGENT


def stop_on_machine_fault(outcomes: list) -> None:
    """Raise :class:`MachineError` when a trial failed because this machine cannot build or start sandboxes.

    Such an outcome says nothing about the task or the policy: a stage that scored it would record a machine
    fault as an invalid task, a failed rollout or a zero benchmark, so every stage (validation, calibration,
    rollouts, the benchmark) stops on the first one instead, with ``autoenv doctor``'s advice.
    """
    for outcome in outcomes:
        if party(outcome.error) is Party.MACHINE:
            raise MachineError(f"{outcome.task}: {(outcome.error_message or '').strip()[:1500]}")


__all__ = ["ERROR_KINDS", "PARTY_OF_KIND", "Party", "error_kind", "is_verdict", "party", "stop_on_machine_fault"]
