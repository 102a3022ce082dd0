# unpack.py ARCHIVE: writes the access log packed by pack.py to standard output. The model is shared: pack.py runs
# the same code with an encoder, so every field is coded from the same predictions on both sides.
import datetime as dt
import lzma
import re
import sys


class Counts:
    """Each context's bit counts and the chance of a 0 they give (pack.py's encoder shares them)."""

    def chance(self, ctx):
        c = self.n.get(ctx) or self.n.setdefault(ctx, [1, 1])
        return c, max(1, min(65535, (c[0] << 16) // (c[0] + c[1])))


class Decoder(Counts):
    """LZMA's binary range decoder."""

    def __init__(self, data):
        self.d, self.i, self.range, self.code, self.n = data, 5, 0xFFFFFFFF, int.from_bytes(data[1:5]), {}

    def fill(self):
        while self.range < 1 << 24:
            self.range <<= 8
            self.code = (self.code << 8 | self.d[self.i]) & 0xFFFFFFFF
            self.i += 1

    def bit(self, ctx, _=None):
        c, p = self.chance(ctx)
        bound = (self.range >> 16) * p
        if self.code < bound:
            self.range, b = bound, 0
        else:
            self.code -= bound
            self.range -= bound
            b = 1
        c[b] += 2
        if self.range < 1 << 24:
            self.fill()
        return b

    def raw(self, nbits, _=None):
        v = 0
        for _ in range(nbits):
            self.range >>= 1
            b = self.code >= self.range
            if b:
                self.code -= self.range
            v = v * 2 + b
            if self.range < 1 << 24:
                self.fill()
        return v


def tree(c, ctx, nbits, v=None):
    node = 1
    for i in range(nbits - 1, -1, -1):
        node = node * 2 + c.bit((ctx, node), None if v is None else v >> i & 1)
    return node - (1 << nbits)


def num(c, ctx, v=None, top=5):
    """v >= 0: its length in bits, then its top bits modelled, the rest as they are."""
    w = None if v is None else v + 1
    n = tree(c, (ctx, "n"), 6, None if w is None else w.bit_length())
    m, k = 1, n - 1
    for i in range(k - 1, max(k - top, 0) - 1, -1):
        m = m * 2 + c.bit((ctx, n, m), None if w is None else w >> i & 1)
    rest = max(k - top, 0)
    m = (m << rest) | c.raw(rest, None if w is None else w & ((1 << rest) - 1))
    return m - 1


def new_ip(c, ip, strings):
    """A dotted quad as its four numbers; anything else as a side string."""
    parts = None if ip is None else ip.split(".")
    quad = ip is None or len(parts) == 4 and all(p.isdigit() and str(int(p)) == p and int(p) < 256 for p in parts)
    if not flag(c, "quad", None if ip is None else quad):
        return strings.pop() if ip is None else strings.append(ip) or ip
    return ".".join(str(tree(c, ("oct", i), 8, None if ip is None else int(parts[i]))) for i in range(4))


def flag(c, ctx, b=None):
    return c.bit(ctx, None if b is None else int(b))


class Model:
    """The state both sides keep; line(c, f) codes one line's fields f (None: decode them)."""

    def __init__(self):
        self.ms = self.health = self.turn = 0
        self.tables, self.rid, self.ua_of, self.last, self.sizes, self.st = {}, {}, {}, {}, {}, {}

    def pick(self, c, name, ctx, v, strings, new=None):
        """v as an index into the table of name's values (in order of first use); 0 and the value: a new one,
        coded by new, or else a side string."""
        index, values = self.tables.setdefault(name, ({}, []))
        i = tree(c, ctx, 12, None if v is None else index.get(v, -1) + 1)
        if i:
            return values[i - 1]
        v = new(c, v, strings) if new else strings.pop() if v is None else strings.append(v) or v
        index[v] = len(values)
        values.append(v)
        return v

    def line(self, c, f, strings):
        kind = tree(c, "kind", 2, None if f is None else f[0])  # 0 raw, 1 line, 2 the health beat, 3 line + CR
        if kind == 0:
            return strings.pop() if f is None else strings.append(f[1])
        ms, host, ip, req, status, size, lat, ua, rid = (None,) * 9 if f is None else f[1]
        if kind == 2:
            ms = self.health + 2000
        else:
            ms = self.ms + num(c, "ts", None if ms is None else ms - self.ms)
        self.ms = ms
        h = (self.turn + tree(c, "host", 3, None if host is None else (int(host[4]) - 1 - self.turn) % 6)) % 6
        self.turn, host = h + 1, f"web-{h + 1}"
        ip = self.pick(c, "ip", ("ip", kind), ip, strings, new_ip)
        known = self.ua_of.get(ip)
        if known is None or not flag(c, ("ua", kind), None if ua is None else known == ua):
            ua = self.pick(c, "ua", "ua", ua, strings)
        self.ua_of[ip] = ua = known if ua is None else ua
        shape = self.pick(c, "shape", ("shape", kind), None if req is None else re.sub(r"\d+", "#", req), strings)
        nums = iter(re.findall(r"\d+", req) if req is not None else ())
        parts = shape.split("#")
        req = parts[0] + "".join(
            str(num(c, ("num", shape, j), None if req is None else int(next(nums)))) + p
            for j, p in enumerate(parts[1:])
        )
        if shape == "GET /healthz":
            self.health = ms
        statuses = self.st.setdefault(shape, {})
        before = self.last.get(req)  # this request's last status and size
        s = tree(c, ("st", shape, before and before[0]), 3, None if status is None else statuses.get(status, -1) + 1)
        if s == 0:
            status = 100 + num(c, "status", None if status is None else status - 100)
            statuses[status] = len(statuses)
        elif status is None:
            status = list(statuses)[s - 1]
        key = (shape, status)
        guesses = [("request", before[1])] if before and before[0] == status else []  # its size last time
        guesses.append(("shape", self.sizes.get(key)))  # the last size of this shape with this status
        for name, guess in guesses:
            if guess is not None and flag(c, (name, key), None if size is None else guess == size):
                size = guess
                break
        else:
            size = num(c, ("size", shape), size, 6)
        self.sizes[key] = size
        self.last[req] = status, size
        lat = num(c, ("lat", h == 3), lat, 6)
        r = self.rid.get(host)
        if r is None or not flag(c, "rid", None if rid is None else rid == r + 1):
            rid = num(c, "rid", rid)
        else:
            rid = r + 1
        self.rid[host] = rid
        text = render(ms, host, ip, req, status, size, lat, ua, rid)
        return text + "\r" if kind == 3 else text


def render(ms, host, ip, req, status, size, lat, ua, rid):
    latency = f"{lat // 1000}.{lat % 1000:03d}"
    return f'{stamp(ms)} {host} {ip} "{req} HTTP/1.1" {status} {size} {latency} "{ua}" rid={host}/{rid:08d}'


def stamp(ms):
    return dt.datetime.fromtimestamp(ms // 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def unpack(archive):
    n = int.from_bytes(archive[:4])
    strings = lzma.decompress(archive[4 : 4 + n]).decode("latin-1").split("\n")[::-1]
    c, model = Decoder(archive[4 + n :]), Model()
    count = num(c, "count")
    lines = [model.line(c, None, strings) for _ in range(count)]
    return "".join(x + "\n" for x in lines).encode("latin-1") + strings.pop().encode("latin-1")


if __name__ == "__main__":
    sys.stdout.buffer.write(unpack(open(sys.argv[1], "rb").read()))
