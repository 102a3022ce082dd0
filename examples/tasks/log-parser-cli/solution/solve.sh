#!/bin/bash
set -euo pipefail
cd /app
cat > /app/logstats.py <<'PY'
#!/usr/bin/env python3
"""Summarise a Common/Combined Log Format access log as JSON."""

import argparse
import json
import re
import sys
from collections import Counter

LINE_RE = re.compile(
    r'^(\S+) (\S+) (\S+) \[([^\]]*)\] "([^"]*)" (\d{3}) (\d+|-)(?: "([^"]*)" "([^"]*)")?$'
)


def summarise(lines, top):
    malformed = 0
    ips = Counter()
    statuses = Counter()
    methods = Counter()
    total_bytes = 0
    for raw in lines:
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        m = LINE_RE.match(line)
        if not m:
            malformed += 1
            continue
        ip, _ident, _user, _ts, request, status, size = m.groups()[:7]
        ips[ip] += 1
        statuses[status] += 1
        parts = request.split()
        methods[parts[0] if parts else ""] += 1
        total_bytes += 0 if size == "-" else int(size)
    ranked = sorted(ips.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return {
        "total_requests": sum(ips.values()),
        "malformed_lines": malformed,
        "unique_ips": len(ips),
        "total_bytes": total_bytes,
        "status_counts": dict(sorted(statuses.items())),
        "requests_by_method": dict(sorted(methods.items())),
        "top_ips": [{"ip": ip, "requests": n} for ip, n in ranked],
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("logfile")
    parser.add_argument("--top", type=int, default=5)
    parser.add_argument("--output")
    args = parser.parse_args(argv)
    try:
        with open(args.logfile, encoding="utf-8", errors="replace") as fh:
            report = summarise(fh, args.top)
    except OSError as exc:
        print(f"error: cannot read {args.logfile}: {exc}", file=sys.stderr)
        return 1
    text = json.dumps(report, indent=2)
    if args.output:
        with open(args.output, "w") as fh:
            fh.write(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
PY
chmod +x /app/logstats.py
python3 /app/logstats.py /app/access.log --output /app/report.json
