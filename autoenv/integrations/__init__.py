"""autoenv inside other people's training loops: TRL's ``GRPOTrainer`` (:mod:`.trl`) through the bridge process
(:mod:`.bridge`), which drives real Harbor trials with :class:`~.driven.DrivenAgent`. See docs/trainers.md."""
