# unpack.py ARCHIVE: writes the access log packed by pack.py to standard output
import datetime as dt
import lzma
import re
import sys

F = [{"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME, "lc": 0, "lp": 0, "pb": 0}]
S = "kind ts host ip ua shape num status lat rid raw".split()


class Stream:
    def __init__(self, b):
        self.b, self.i = b, 0

    def num(self):
        n = sh = 0
        while True:
            c = self.b[self.i]
            self.i += 1
            n |= (c & 127) << sh
            sh += 7
            if c < 128:
                return n >> 1 if n % 2 == 0 else -(n >> 1) - 1

    def text(self):
        n = self.num()
        self.i += n
        return self.b[self.i - n : self.i].decode("latin-1")


def stamp(ms):
    return dt.datetime.fromtimestamp(ms // 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


head = Stream(lzma.decompress(open(sys.argv[1], "rb").read(), format=lzma.FORMAT_RAW, filters=F))
count, tail = head.num(), head.text()
sizes = [head.num() for _ in S]
at = head.i
s = {}
for k, n in zip(S, sizes):
    s[k] = Stream(head.b[at : at + n])
    at += n
out = []
last_ms = last_health = turn = 0
ips, ua_of, known, shapes, counter = [], {}, {}, [], {}
for _ in range(count):
    kind = s["kind"].num()
    if kind == 0:
        out.append(s["raw"].text())
        continue
    ms = last_health + 2000 if kind == 2 else last_ms + s["ts"].num()
    last_ms = ms
    h = (turn + s["host"].num()) % 6
    turn = h + 1
    host = f"web-{h + 1}"
    i = s["ip"].num()
    if i == 0:
        ips.append(s["ip"].text())
    ip = ips[len(ips) - max(i, 1)]
    if s["ua"].num():
        ua_of[ip] = s["ua"].text()
    j = s["shape"].num()
    if j == 0:
        shapes.append(s["shape"].text())
    req = re.sub("#", lambda _: str(s["num"].num()), shapes[j - 1])
    if req == "GET /healthz":
        last_health = ms
    st = s["status"].num()
    if st:
        known[req] = (st - 1, s["status"].num())
    status, size = known[req]
    lat = s["lat"].num()
    rid = counter.get(host, 0) + s["rid"].num()
    counter[host] = rid + 1
    latency = f"{lat // 1000}.{lat % 1000:03d}"
    out.append(f'{stamp(ms)} {host} {ip} "{req} HTTP/1.1" {status} {size} {latency} "{ua_of[ip]}" rid={host}/{rid:08d}')
sys.stdout.buffer.write("".join(x + "\n" for x in out).encode("latin-1") + tail.encode("latin-1"))
