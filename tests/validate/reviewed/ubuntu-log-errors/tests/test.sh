#!/bin/bash
want=$(printf 'api 3\nworker 2\nweb 1')
got=$(cat /app/errors.txt 2>/dev/null)
echo "got:"; echo "$got"
if [ "$got" = "$want" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
