#!/bin/bash
mkdir -p /logs/verifier
want=$(grep -ci rose /app/poem.txt)
if [ "$(tr -d '[:space:]' < /app/count.txt 2>/dev/null)" = "$want" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
