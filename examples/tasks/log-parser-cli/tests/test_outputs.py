import hashlib
import json
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from agentcall import agent_folder, read_agent_file, run_agent  # the agent's program runs as nobody, never here

CLI = "/app/logstats.py"
ACCESS_LOG = Path("/app/access.log")
ACCESS_LOG_SHA256 = "67fe03af2af31cd8d3573e2a9e1276199386877c70edc490756914d50e6620a1"

_LINE = re.compile(
    r'^(\S+) (\S+) (\S+) \[([^\]]*)\] "([^"]*)" (\d{3}) (\d+|-)(?: "([^"]*)" "([^"]*)")?$'
)


def reference_report(text, top=5):
    malformed, ips, statuses, methods, total_bytes = 0, Counter(), Counter(), Counter(), 0
    for line in text.split("\n"):
        if not line.strip():
            continue
        m = _LINE.match(line)
        if not m:
            malformed += 1
            continue
        ips[m.group(1)] += 1
        statuses[m.group(6)] += 1
        words = m.group(5).split()
        methods[words[0] if words else ""] += 1
        total_bytes += 0 if m.group(7) == "-" else int(m.group(7))
    ranked = sorted(ips.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return {
        "total_requests": sum(ips.values()),
        "malformed_lines": malformed,
        "unique_ips": len(ips),
        "total_bytes": total_bytes,
        "status_counts": dict(statuses),
        "requests_by_method": dict(methods),
        "top_ips": [{"ip": ip, "requests": n} for ip, n in ranked],
    }


def run_cli(*args):
    return run_agent(["python3", CLI, *map(str, args)], text=True, timeout=30)


@pytest.fixture()
def tmp_path():
    """A folder the agent's program (nobody) can read and write: pytest's own is the grader's alone."""
    return agent_folder(writable=True)


SMALL_LOG = "\n".join(
    [
        '1.1.1.1 - - [01/Jan/2024:00:00:01 +0000] "GET / HTTP/1.1" 200 100',
        '2.2.2.2 - bob [01/Jan/2024:00:00:02 +0000] "POST /login HTTP/1.1" 302 - "-" "curl/8.0"',
        '1.1.1.1 - - [01/Jan/2024:00:00:03 +0000] "GET /a HTTP/1.1" 404 50 "http://x/" "Mozilla/5.0"',
        "",
        "not a log line",
        '3.3.3.3 - - [01/Jan/2024:00:00:04 +0000] "GET /b HTTP/1.1" 2000 10',
        '10.0.0.2 - - [01/Jan/2024:00:00:05 +0000] "DELETE /c HTTP/1.1" 500 7',
        '10.0.0.10 - - [01/Jan/2024:00:00:06 +0000] "GET /d HTTP/1.1" 200 3',
        '2.2.2.2 - - [01/Jan/2024:00:00:07 +0000] "GET /e HTTP/1.1" 200 1000 "-"',
        "   ",
    ]
) + "\n"

SMALL_EXPECTED_TOP3 = {
    "total_requests": 5,
    "malformed_lines": 3,
    "unique_ips": 4,
    "total_bytes": 160,
    "status_counts": {"200": 2, "302": 1, "404": 1, "500": 1},
    "requests_by_method": {"GET": 3, "POST": 1, "DELETE": 1},
    "top_ips": [
        {"ip": "1.1.1.1", "requests": 2},
        {"ip": "10.0.0.10", "requests": 1},
        {"ip": "10.0.0.2", "requests": 1},
    ],
}


def test_access_log_untouched():
    assert hashlib.sha256(ACCESS_LOG.read_bytes()).hexdigest() == ACCESS_LOG_SHA256


def test_report_json_matches_access_log():
    report = json.loads(Path("/app/report.json").read_text())
    assert report == reference_report(ACCESS_LOG.read_text(), top=5)


def test_small_log_stdout_exact(tmp_path):
    log = tmp_path / "small.log"
    log.write_text(SMALL_LOG)
    out = run_cli(log, "--top", 3)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == SMALL_EXPECTED_TOP3


def test_default_top_is_five_and_output_flag(tmp_path):
    rng = random.Random(4242)
    lines = []
    ips = [f"172.20.{rng.randint(0, 9)}.{rng.randint(1, 99)}" for _ in range(12)]
    for i in range(300):
        ip = rng.choice(ips)
        status = rng.choice(["200", "200", "201", "301", "404", "500", "503"])
        size = rng.choice(["-", str(rng.randint(0, 5000))])
        method = rng.choice(["GET", "GET", "POST", "PATCH", "HEAD"])
        line = f'{ip} - - [02/Feb/2024:10:{i % 60:02d}:00 +0000] "{method} /p/{i} HTTP/1.0" {status} {size}'
        if rng.random() < 0.4:
            line += ' "https://example.org/" "agent/1.0"'
        if rng.random() < 0.05:
            line = line.replace(f" {status} ", " xyz ")
        lines.append(line)
    text = "\n".join(lines) + "\n"
    log = tmp_path / "random.log"
    log.write_text(text)
    dest = tmp_path / "out" / "r.json"
    dest.parent.mkdir()
    dest.parent.chmod(0o777)
    out = run_cli(log, "--output", dest)
    assert out.returncode == 0, out.stderr
    report = json.loads(read_agent_file(dest))
    expected = reference_report(text, top=5)
    assert expected["malformed_lines"] > 0
    assert report == expected
    assert len(report["top_ips"]) == 5


def test_top_larger_than_unique_ips(tmp_path):
    log = tmp_path / "small.log"
    log.write_text(SMALL_LOG)
    out = run_cli(log, "--top", 50)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert [e["ip"] for e in report["top_ips"]] == ["1.1.1.1", "10.0.0.10", "10.0.0.2", "2.2.2.2"]


def test_missing_file_fails(tmp_path):
    out = run_cli(tmp_path / "does-not-exist.log")
    assert out.returncode != 0
