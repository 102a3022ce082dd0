#!/bin/bash
mkdir -p /logs/verifier
# only root writes the verdict: a reward.json the tests or the agent's code left would win over reward.txt
chmod 755 /logs/verifier; rm -f /logs/verifier/reward.json
chmod -R go-rwx /tests
# this task's test files only, run by the grader (uid 65533) from a folder only it can read; the agent's
# program (logstats.py) runs as nobody through the broker tests/agentcall.py (run_agent), never as the grader
T=$(mktemp -d)
cp /tests/test_outputs.py /tests/agentcall.py "$T"/ && chown -R 65533:65533 "$T" && chmod -R go-rwx "$T" && cd "$T" && \
  python3 -I /tests/agentcall.py grade -- -q -p no:cacheprovider -c /dev/null --rootdir "$T" --noconftest "$T/test_outputs.py" -rA
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
