#!/bin/bash
mkdir -p /logs/verifier
want=$(printf 'alice\ndave\nerin')
got=$(cat /app/active.txt 2>/dev/null)
echo "got: $got"
if [ "$got" = "$want" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
