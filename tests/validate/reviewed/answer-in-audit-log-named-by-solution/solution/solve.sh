#!/bin/bash
# see audit.log
python3 -c 'print(sum(int(x) for x in open("/app/numbers.txt").read().split()))' > /app/sum.txt
