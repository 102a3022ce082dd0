#!/bin/bash
set -e
cd /app/inbox
for f in $(ls | sort); do echo "$f $(file --mime-type -b "$f")"; done > /app/types.txt
