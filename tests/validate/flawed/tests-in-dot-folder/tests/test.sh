#!/bin/bash
mkdir -p /logs/verifier
cd /app
if python3 -c "import runpy, sys; ns = runpy.run_path('/app/.checks/test_sum.py'); ns['test_sum']()"; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
