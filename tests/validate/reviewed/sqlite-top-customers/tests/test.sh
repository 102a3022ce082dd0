#!/bin/bash
mkdir -p /logs/verifier
T=$(mktemp -d)
cp /tests/test_outputs.py "$T"/ && cd "$T" && \
  python3 -I -m pytest -q -p no:cacheprovider -c /dev/null --rootdir "$T" --noconftest "$T/test_outputs.py" -rA
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
