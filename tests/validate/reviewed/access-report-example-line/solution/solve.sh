#!/bin/bash
python3 - <<'PY'
stats = {}
for line in open("/app/access.log"):
    parts = line.split()
    if len(parts) < 2:
        continue
    n, b = stats.get(parts[0], (0, 0))
    stats[parts[0]] = (n + 1, b + int(parts[-1]))
with open("/app/report.csv", "w") as out:
    out.write("ip,requests,bytes\n")
    for ip, (n, b) in sorted(stats.items(), key=lambda kv: (-kv[1][0], kv[0])):
        out.write(f"{ip},{n},{b}\n")
PY
