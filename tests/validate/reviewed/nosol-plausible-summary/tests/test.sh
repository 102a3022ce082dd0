#!/bin/bash
# checks the summary's shape: keys, types, bounds (never the values for the shipped events)
mkdir -p /logs/verifier
python3 - <<'PY'
import json, sys
try:
    s = json.load(open("/app/summary.json"))
except Exception as exc:
    print("no summary:", exc); sys.exit(1)
ok = (isinstance(s.get("total_events"), int) and s["total_events"] >= 0
      and isinstance(s.get("users_with_errors"), int) and 0 <= s["users_with_errors"] <= max(s["total_events"], 0)
      and isinstance(s.get("avg_session_duration"), (int, float)) and s["avg_session_duration"] >= 0)
print("summary", s, "ok" if ok else "wrong shape")
sys.exit(0 if ok else 1)
PY
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
