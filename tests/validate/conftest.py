"""The task corpus under flawed/ and good/ is data for the validator, not tests for pytest."""

collect_ignore_glob = ["flawed/*", "good/*", "reviewed/*"]
