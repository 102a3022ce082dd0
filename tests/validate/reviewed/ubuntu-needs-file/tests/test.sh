#!/bin/bash
mkdir -p /logs/verifier
expected='archive.bin application/gzip
notes.txt text/plain
pixel.png image/png'
if [ "$(cat /app/types.txt 2>/dev/null)" = "$expected" ]; then echo 1 > /logs/verifier/reward.txt; else echo "got: $(cat /app/types.txt 2>&1)"; echo 0 > /logs/verifier/reward.txt; fi
