#!/bin/bash
set -e
pip install --no-cache-dir regex==2024.11.6
python3 -c 'import regex; print(len(regex.findall(r"\S+", open("/app/essay.txt").read())))' > /app/words.txt
