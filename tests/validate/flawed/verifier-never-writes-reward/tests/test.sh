#!/bin/bash
mkdir -p /logs/verifier
[ "$(tr -d '[:space:]' < /app/sum.txt 2>/dev/null)" = "5004" ] && echo PASS || echo FAIL
