#!/bin/bash
mkdir -p /logs/verifier
want=$(awk '$8 == 500' /app/access.log | wc -l)
if [ "$(tr -d '[:space:]' < /app/errors.txt 2>/dev/null)" = "$want" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
