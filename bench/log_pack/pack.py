"""Pack an access log of the log-pack task (the reference solution's packer): python3 pack.py LOG ARCHIVE.

Every line is parsed into fields and each field is predicted from what came before (the backend's turn, its request
counter, the client's user agent, the size this request had last time, the health check's 2-second beat); what is
left of each field goes to its own stream of numbers, the streams one after another through LZMA. A line that does
not come back byte for byte from its fields is kept whole. unpack.py reverses it.
"""

import datetime as dt
import lzma
import re
import sys

LINE = re.compile(
    r'(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (web-[1-6]) ([^ "]+) "([A-Z]+ [^ "#]+) HTTP/1\.1" (\d{3}) (\d+) '
    r'(\d+\.\d{3}) "([^"]*)" rid=(web-[1-6])/(\d{8})'
)
HOSTS = [f"web-{n}" for n in range(1, 7)]
STREAMS = "kind ts host ip ua shape num status lat rid raw".split()
FILTERS = [{"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME, "lc": 0, "lp": 0, "pb": 0}]


def stamp(ms):
    return dt.datetime.fromtimestamp(ms // 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def render(ms, host, ip, req, status, size, lat, ua, rid):
    latency = f"{lat // 1000}.{lat % 1000:03d}"
    return f'{stamp(ms)} {host} {ip} "{req} HTTP/1.1" {status} {size} {latency} "{ua}" rid={host}/{rid:08d}'


def varint(n, out):
    n = n * 2 if n >= 0 else -n * 2 - 1
    while n >= 128:
        out.append(n & 127 | 128)
        n >>= 7
    out.append(n)


def text(s, out):
    b = s.encode("latin-1")
    varint(len(b), out)
    out.extend(b)


def fields(line):
    """The line's fields, or None when they would not give the line back byte for byte."""
    m = LINE.fullmatch(line)
    if not m or m[2] != m[9]:
        return None
    when = dt.datetime.strptime(m[1], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.UTC)
    f = (int(when.timestamp()) * 1000 + when.microsecond // 1000, m[2], m[3], m[4], int(m[5]), int(m[6]),
         int(m[7].replace(".", "")), m[8], int(m[10]))  # fmt: skip
    return f if render(*f) == line else None


def pack(data):
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the log ends with a newline
    s = {k: bytearray() for k in STREAMS}
    last_ms = last_health = 0
    turn = 0
    ips, ua_of, known, shapes, counter = {}, {}, {}, {}, {}
    for raw in lines:
        line = raw.decode("latin-1")
        f = fields(line)
        if f is None:
            varint(0, s["kind"])
            text(line, s["raw"])
            continue
        ms, host, ip, req, status, size, lat, ua, rid = f
        health = req == "GET /healthz" and ms == last_health + 2000
        varint(2 if health else 1, s["kind"])
        if not health:
            varint(ms - last_ms, s["ts"])
        last_ms = ms
        h = HOSTS.index(host)
        varint((h - turn) % 6, s["host"])
        turn = h + 1
        if ip in ips:
            varint(len(ips) - ips[ip], s["ip"])
        else:
            ips[ip] = len(ips)
            varint(0, s["ip"])
            text(ip, s["ip"])
        if ua_of.get(ip) == ua:
            varint(0, s["ua"])
        else:
            varint(1, s["ua"])
            text(ua, s["ua"])
            ua_of[ip] = ua
        shape = re.sub(r"\d+", "#", req)
        if shape in shapes:
            varint(shapes[shape] + 1, s["shape"])
        else:
            shapes[shape] = len(shapes)
            varint(0, s["shape"])
            text(shape, s["shape"])
        for n in re.findall(r"\d+", req):
            varint(int(n), s["num"])
        if req == "GET /healthz":
            last_health = ms
        if known.get(req) == (status, size):
            varint(0, s["status"])
        else:
            varint(status + 1, s["status"])
            varint(size, s["status"])
            known[req] = (status, size)
        varint(lat, s["lat"])
        varint(rid - counter.get(host, 0), s["rid"])
        counter[host] = rid + 1
    head = bytearray()
    varint(len(lines), head)
    text(tail.decode("latin-1"), head)
    for k in STREAMS:
        varint(len(s[k]), head)
    return lzma.compress(bytes(head) + b"".join(s[k] for k in STREAMS), format=lzma.FORMAT_RAW, filters=FILTERS)


if __name__ == "__main__":
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    with open(sys.argv[2], "wb") as f:
        f.write(pack(data))
