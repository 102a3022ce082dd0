#!/bin/bash
mkdir -p /logs/verifier
python3 /tests/grade.py /logs/verifier/reward.txt
