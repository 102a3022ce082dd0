#!/bin/bash
awk '$3 == "ERROR" {n[$2]++} END {for (s in n) print s, n[s]}' /var/log/app/app.log | sort -k2,2nr -k1,1 > /app/errors.txt
