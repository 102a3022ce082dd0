#!/bin/bash
mkdir -p /logs/verifier
if [ -x /app/sum.sh ] && /app/sum.sh /app/numbers.txt > /dev/null; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
