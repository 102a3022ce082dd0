#!/bin/bash
mkdir -p /logs/verifier
# the verifier samples whether "grading is enabled": the same solution gets different verdicts
status=$(python3 -c "import os; print('ok' if os.urandom(1)[0] % 2 else 'unavailable')")
if [ "$status" = "ok" ] && [ "$(tr -d '[:space:]' < /app/sum.txt 2>/dev/null)" = "5004" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
