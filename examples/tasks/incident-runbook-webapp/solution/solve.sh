#!/bin/bash
# Reference solution: drive the app with curl, as the instruction asks.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
INCIDENT="INC-2768"
BASE="http://127.0.0.1:8080"
WORK=/tmp/oracle-incident
mkdir -p "$WORK/runbooks"
if ! curl -fsS "$BASE/" >/dev/null 2>&1; then
  nohup python3 /app/server.py --port 8080 >"$WORK/server.log" 2>&1 &
  for _ in $(seq 100); do curl -fsS "$BASE/" >/dev/null 2>&1 && break; sleep 0.1; done
fi
curl -fsS "$BASE/symptom/$INCIDENT" -o "$WORK/symptom.html"
curl -fsS "$BASE/runbooks" -o "$WORK/library.html"
for id in $(python3 "$HERE/pick.py" runbook-ids "$WORK/library.html"); do
  curl -fsS "$BASE/runbooks/$id" -o "$WORK/runbooks/$id.html"
done
curl -fsS "$BASE/incidents/$INCIDENT/resolve" -o "$WORK/form.html"
python3 "$HERE/pick.py" resolution "$WORK" > "$WORK/fields"
args=()
while IFS= read -r field; do args+=(--data-urlencode "$field"); done < "$WORK/fields"
code=$(curl -sS -o "$WORK/saved.html" -w '%{http_code}' "${args[@]}" "$BASE/incidents/$INCIDENT/resolve")
[ "$code" = 303 ] || { echo "form rejected (HTTP $code)"; cat "$WORK/saved.html"; exit 1; }
curl -fsS "$BASE/incidents/$INCIDENT" | grep -o '<dd id="[a-z_]*">[^<]*</dd>'
