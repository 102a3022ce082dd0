#!/bin/bash
mkdir -p /logs/verifier
cd /app
if python3 -m pytest -q -p no:cacheprovider /tests/test_sum.py; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
