#!/bin/bash
mkdir -p /logs/verifier
# only root writes the verdict; the tests (and the agent's code they run) run as nobody
chmod 755 /logs/verifier; rm -f /logs/verifier/reward.json
chmod -R go-rwx /tests
cd /app
# run only this task's test files from a fresh folder: files planted in /tests or /app
# (a conftest.py, a fake pytest.py) must not take part (see autoenv/families/office/common.py)
T=$(mktemp -d)
cp /tests/test_outputs.py "$T"/ && chmod -R a+rX "$T" && cd "$T" && \
  python3 -I -c 'import os, sys; os.setgroups([]); os.setgid(65534); os.setuid(65534); os.execv(sys.executable, [sys.executable, "-I", "-m", "pytest", *sys.argv[1:]])' -q -p no:cacheprovider -c /dev/null --rootdir "$T" --noconftest "$T/test_outputs.py" -rA
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
