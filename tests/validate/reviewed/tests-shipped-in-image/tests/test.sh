#!/bin/bash
cd /app
if python3 -m pytest -q -p no:cacheprovider /app/tests/test_outputs.py -rA; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
