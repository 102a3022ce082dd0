#!/bin/bash
# Terminal-Bench style: pytest baked into the image, the package imported from /app, reward from pytest's status
cd /tests
python3 -m pytest -q -p no:cacheprovider test_outputs.py -rA
if [ $? -eq 0 ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
