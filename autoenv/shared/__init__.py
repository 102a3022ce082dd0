"""The types every stage exchanges, on a floor of their own: this package imports nothing of autoenv's.

A type lives here when two floors exchange it and the lower one would otherwise import the higher one's module
for it: actions and their results (the families' solver programs and the agents), seed cases (the proposer and the
families' generators), GRPO groups (rollout and the batch builder), episodes and token turns (the proposer and
training). Each stage's own models stay with the stage.
"""
