"""The task proposer: seed cases, the workspace, and the prompt / feedback / agentic methods.

Its task families are also recipes of the scripted solver: the scripted
policy loads them as a plugin on first use (see :mod:`autoenv.proposer.recipes`),
in whatever process it runs.
"""
