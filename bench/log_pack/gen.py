"""The access log of the log-pack experiment (``bench/log_pack_task.py``): a load balancer's log with structure a
careful reader finds in the data and a general-purpose compressor does not use.

What the data holds (nothing of it is told to the solver): requests arrive a few milliseconds apart; the balancer
hands them to its backends in turn (``web-1`` .. ``web-6``, a backend that is drained is skipped for a while); each
backend numbers its requests (``rid=web-3/00004812``, one more than its last); a client (IP) keeps one user agent; an
item's page always has the same size, a missing item (above the catalogue's last id) is a 404 of 153 bytes; the
health checker asks ``/healthz`` every 2 seconds exactly. A few lines per thousand are what a real log also holds:
a line cut short, a line from the balancer itself, a CRLF.
"""

from __future__ import annotations

import datetime as dt
import random

HOSTS = [f"web-{n}" for n in range(1, 7)]
BROWSERS = [
    "Mozilla/5.0 (X11; Linux x86_64; rv:{v}.0) Gecko/20100101 Firefox/{v}.0",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{v}.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/{w}.1 "
    "Safari/605.1.15",
    "Mozilla/5.0 (iPhone; CPU iPhone OS {w}_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148",
    "curl/7.{w}.0",
    "python-requests/2.{w}.0",
]
ASSETS = ["app.js", "app.css", "logo.svg", "vendor.js", "fonts/inter.woff2", "favicon.ico"]
CATALOGUE = 48_000


def access_log(seed: str, lines: int) -> bytes:
    """``lines`` lines (about 160 bytes each) of draw ``seed``."""
    r = random.Random(f"logpack:{seed}")
    clients = [f"{r.choice([10, 172, 192])}.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}"
               for _ in range(700)]  # fmt: skip
    agent = {ip: r.choice(BROWSERS).format(v=r.randint(110, 131), w=r.randint(12, 18)) for ip in clients}
    weights = [1 / (k + 1) ** 0.9 for k in range(len(clients))]
    asset_size = {a: r.randint(900, 400_000) for a in ASSETS}
    item_size: dict[int, int] = {}
    counters = {h: r.randint(1, 90_000) for h in HOSTS}
    t = dt.datetime(2026, 11, 30, r.randint(0, 20), r.randint(0, 59), r.randint(0, 59), tzinfo=dt.UTC)
    t_ms = int(t.timestamp() * 1000) + r.randint(0, 999)
    next_health = t_ms + 2000
    turn, drained, drained_until = 0, None, 0
    out: list[bytes] = []

    def stamp(ms: int) -> str:
        return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"

    def backend() -> str:
        nonlocal turn
        while True:
            host = HOSTS[turn % len(HOSTS)]
            turn += 1
            if host != drained or t_ms >= drained_until:
                return host

    while len(out) < lines:
        t_ms += int(r.expovariate(1 / 9))
        if r.random() < 0.0004:  # a backend is drained for a while
            drained, drained_until = r.choice(HOSTS), t_ms + r.randint(3_000, 40_000)
        if t_ms >= next_health:
            ms, ip, ua, req = next_health, "10.0.0.2", "lb-health/1.4", "GET /healthz"
            status, size = 200, 2
            next_health += 2000
            t_ms = max(t_ms, ms)
        else:
            ms = t_ms
            ip = r.choices(clients, weights)[0]
            ua = agent[ip]
            kind = r.random()
            if kind < 0.45:
                item = int(r.paretovariate(0.6) * 40) if r.random() < 0.7 else r.randint(1, CATALOGUE + 4000)
                req = f"GET /api/v2/items/{item}"
                if item > CATALOGUE:
                    status, size = 404, 153
                else:
                    status, size = 200, item_size.setdefault(item, r.randint(1_200, 9_000))
            elif kind < 0.60:
                item, page = r.randint(1, CATALOGUE), r.randint(1, 4)
                req = f"GET /api/v2/items/{item}/reviews?page={page}"
                status, size = 200, r.randint(300, 6_000)
            elif kind < 0.85:
                asset = r.choice(ASSETS)
                req = f"GET /static/{asset}"
                status, size = (304, 0) if r.random() < 0.4 else (200, asset_size[asset])
            elif kind < 0.95:
                req = r.choice(["POST /api/v2/cart", "DELETE /api/v2/cart", "POST /api/v2/checkout"])
                status, size = r.choice([(201, 88), (200, 64), (409, 120), (201, 88), (201, 88)])
            else:
                req = r.choice(["GET /", "GET /search?q=" + r.choice(["lamp", "desk", "chair", "mug"])])
                status, size = 200, r.randint(20_000, 60_000)
        host = backend()
        counters[host] += 1
        latency = r.lognormvariate(2.6 if host != "web-4" else 3.3, 0.7)
        if status == 500:
            latency += 1000
        line = (f'{stamp(ms)} {host} {ip} "{req} HTTP/1.1" {status} {size} {latency:.3f} "{ua}" '
                f"rid={host}/{counters[host]:08d}")  # fmt: skip
        odd = r.random()
        if odd < 0.001:
            line = line[: r.randint(10, len(line) - 5)]  # cut short
        elif odd < 0.002:
            line = f"{stamp(ms)} lb-1 notice: backend {r.choice(HOSTS)} health check took {r.randint(900, 3000)} ms"
        elif odd < 0.0025:
            line += "\r"
        out.append(line.encode())
    return b"\n".join(out) + b"\n"
