"""Whose fault a trial's outcome is: one table, used by every stage that reads an outcome.

Every outcome lands on one party:

- **the agent** (:attr:`Party.AGENT`): a verdict. The reward counts as the attempt's, 0 when it failed; an agent
  that timed out, passed a bound of its trial (a 20 GB file left behind: ``agent_limit``), broke its own
  sandbox's exec channel (root in the sandbox can: ``sandbox``/``HelperGone`` after the start) or was in a trial
  that never ended once it had started (``hung``) failed its attempt.
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


class ErrorKind(StrEnum):
    """What a trial outcome records as its error (``TrialOutcome.error``, a string on disk and in the store): one
    name for each way a trial ends without a verdict of its own; whose fault each is, :data:`PARTY_OF_KIND`."""

    BUILD = "build"
    SANDBOX = "sandbox"
    MACHINE = "machine"
    AGENT_TIMEOUT = "agent_timeout"
    AGENT_SETUP_TIMEOUT = "agent_setup_timeout"
    VERIFIER_TIMEOUT = "verifier_timeout"
    REWARD_MISSING = "reward_missing"
    REWARD_INVALID = "reward_invalid"
    AGENT_LIMIT = "agent_limit"
    #: the exec channel to the sandbox's PID 1 broke after the start (root in the sandbox can do this)
    HELPER_GONE = "HelperGone"
    #: the trial outlived its own timeouts and a margin after its agent had started, and was cancelled
    #: (:func:`autoenv.trials.runner.trial_deadline`); before the agent started, such a hang is the machine's
    HUNG = "hung"
    #: Harbor could not load the task, or the error explained as the task's (:func:`autoenv.errors.explain`)
    INVALID_TASK = "invalid_task"
    #: the task is fine; this backend cannot run it (a network mode it cannot enforce)
    BACKEND_UNSUPPORTED = "backend_unsupported"
    ENDPOINT = "endpoint"
    POLICY_UNREACHABLE = "policy_unreachable"
    POLICY_AUTH = "policy_auth"
    POLICY_ENDPOINT = "policy_endpoint"
    POLICY_CONFIG = "policy_config"


K = ErrorKind

#: Harbor's and autoenv's exception type names -> the error kind a trial outcome records.
ERROR_KINDS: dict[str, ErrorKind] = {
    "SandboxBuildFailedError": K.BUILD,
    "BuildError": K.BUILD,
    "EnvironmentStartTimeoutError": K.BUILD,
    # the sandbox runtime failed after the sandbox started (the agent, root in it, can do this): its failure
    "SandboxError": K.SANDBOX,
    # this machine cannot build or start any sandbox (a program missing, the build network, runc): stages stop
    "MachineError": K.MACHINE,
    "SandboxStartError": K.MACHINE,
    "AgentTimeoutError": K.AGENT_TIMEOUT,
    "AgentSetupTimeoutError": K.AGENT_SETUP_TIMEOUT,
    "VerifierTimeoutError": K.VERIFIER_TIMEOUT,
    "RewardFileNotFoundError": K.REWARD_MISSING,
    "RewardFileEmptyError": K.REWARD_MISSING,
    "VerifierOutputParseError": K.REWARD_INVALID,
    # what the agent left passed a bound of the trial (bytes, files, depth, seconds to copy out)
    "TransferLimitExceeded": K.AGENT_LIMIT,
    # the policy endpoint failed: infrastructure, not the task (calibration can exclude these)
    "PolicyConnectionError": K.POLICY_UNREACHABLE,
    "PolicyAuthError": K.POLICY_AUTH,
    "PolicyEndpointError": K.POLICY_ENDPOINT,
    "PolicyConfigError": K.POLICY_CONFIG,
}

#: error kind -> whose fault. ``None`` is a trial that ended with a verdict. A kind not listed is a bug of the
#: harness (an exception nobody classified): it is left out like an endpoint fault, never counted as a verdict.
PARTY_OF_KIND: dict[str | None, Party] = {
    None: Party.AGENT,
    K.AGENT_TIMEOUT: Party.AGENT,
    K.AGENT_LIMIT: Party.AGENT,
    K.REWARD_MISSING: Party.AGENT,
    K.REWARD_INVALID: Party.AGENT,
    K.VERIFIER_TIMEOUT: Party.AGENT,
    K.SANDBOX: Party.AGENT,
    K.HELPER_GONE: Party.AGENT,
    K.HUNG: Party.AGENT,
    K.BUILD: Party.TASK,
    K.INVALID_TASK: Party.TASK,
    K.BACKEND_UNSUPPORTED: Party.TASK,
    K.AGENT_SETUP_TIMEOUT: Party.TASK,
    K.MACHINE: Party.MACHINE,
    K.ENDPOINT: Party.ENDPOINT,
    K.POLICY_UNREACHABLE: Party.ENDPOINT,
    K.POLICY_AUTH: Party.ENDPOINT,
    K.POLICY_ENDPOINT: Party.ENDPOINT,
    K.POLICY_CONFIG: Party.ENDPOINT,
}


def error_kind(exception_type: str | None) -> str | None:
    """The outcome's error kind for an exception type name, as the string it is recorded as (unknown names pass
    through: a kind nobody classified)."""
    if exception_type is None:
        return None
    kind = ERROR_KINDS.get(exception_type)
    return exception_type if kind is None else str(kind)


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


__all__ = [
    "ERROR_KINDS",
    "PARTY_OF_KIND",
    "ErrorKind",
    "Party",
    "error_kind",
    "is_verdict",
    "party",
    "stop_on_machine_fault",
]
