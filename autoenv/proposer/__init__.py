"""The task proposer: seed cases, the workspace, and the prompt / feedback / agentic methods.

What it writes comes from the task families (:mod:`autoenv.families`) offline, or from a model; every
attempt is judged where it is made (:mod:`autoenv.validate.judge`). :mod:`autoenv.proposer.stage` is the
proposer as a flywheel stage.
"""
