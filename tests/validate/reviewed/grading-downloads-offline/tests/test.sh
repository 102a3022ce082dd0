#!/bin/bash
mkdir -p /logs/verifier
pip install --no-cache-dir pytest==8.3.4
cd /tests
if python3 -m pytest -q -p no:cacheprovider test_outputs.py -rA; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
