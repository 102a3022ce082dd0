#!/bin/bash
mkdir -p /logs/verifier
# only root writes the verdict: a reward.json the tests or the agent's code left would win over reward.txt
chmod 755 /logs/verifier; rm -f /logs/verifier/reward.json
chmod -R go-rwx /tests
# run only this task's test files, from a fresh folder
T=$(mktemp -d)
cp /tests/test_outputs.py /tests/docx_format.py "$T"/ && chmod -R a+rX "$T" && cd "$T" && \
  python3 -I -m pytest -q -p no:cacheprovider -c /dev/null --rootdir "$T" --noconftest "$T/test_outputs.py" -rA
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
