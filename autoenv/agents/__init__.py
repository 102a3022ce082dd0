"""Agents autoenv adds to Harbor: a terminal agent driven by a pluggable policy.

Proposer and solver are the same thing here (a policy driving a terminal in a
sandbox), so both are built on :class:`autoenv.agents.terminal.TerminalAgent`
and the policies in :mod:`autoenv.agents.policies`. Importing this package
stays cheap; the agent module pulls in Harbor and the policies their clients.
"""
