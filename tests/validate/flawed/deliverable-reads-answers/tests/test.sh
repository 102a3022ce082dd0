#!/bin/bash
mkdir -p /logs/verifier
# runs the agent's program as root while the expected answer sits readable next to the input
got=$(python3 /app/sum.py /tests/hidden_numbers.txt 2>&1)
echo "sum.py printed: $got"
if [ "$(printf '%s' "$got" | tr -d '[:space:]')" = "$(tr -d '[:space:]' < /tests/expected_sum.txt)" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
