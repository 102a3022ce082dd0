#!/bin/bash
mkdir -p /logs/verifier
# only root writes the verdict; grade.py runs the agent's function as nobody
chmod 755 /logs/verifier; rm -f /logs/verifier/reward.json
chmod -R go-rwx /tests
python3 -I /tests/grade.py /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt
