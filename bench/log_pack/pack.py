"""Pack an access log of the log-pack task (the reference solution's packer): python3 pack.py LOG ARCHIVE.

Every line is parsed into fields and each field is coded from what came before (the backend's turn, its request
counter, the client's user agent, the size this request had last time, the health check's 2-second beat) by an
adaptive binary range coder: LZMA's, with each context's bit probabilities counted, so a field costs about what it
holds. The model is unpack.py's (imported from beside this file, or from /app in the task): the decoder runs the
same code. New strings (addresses, user agents, request shapes) and lines that do not come back byte for byte from
their fields go to one LZMA stream of side strings.
"""

import lzma
import re
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).parent), "/app"]
import unpack  # noqa: E402  (the model and the decoder: one source for both sides)

LINE = re.compile(
    r'(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (web-[1-6]) ([^ "]+) "([A-Z]+ [^ "#]+) HTTP/1\.1" (\d{3}) (\d+) '
    r'(\d+\.\d{3}) "([^"]*)" rid=(web-[1-6])/(\d{8})'
)


class Encoder(unpack.Counts):
    """LZMA's binary range encoder, with the decoder's probabilities."""

    def __init__(self):
        self.low, self.range, self.cache, self.pending, self.out, self.n = 0, 0xFFFFFFFF, 0, 1, bytearray(), {}

    def shift(self):
        if self.low < 0xFF000000 or self.low >= 1 << 32:
            carry, byte = self.low >> 32, self.cache
            for _ in range(self.pending):
                self.out.append((byte + carry) & 0xFF)
                byte = 0xFF
            self.pending, self.cache = 0, (self.low >> 24) & 0xFF
        self.pending += 1
        self.low = (self.low & 0x00FFFFFF) << 8

    def fill(self):
        while self.range < 1 << 24:
            self.range <<= 8
            self.shift()

    def bit(self, ctx, b):
        c, p = self.chance(ctx)
        bound = (self.range >> 16) * p
        if b:
            self.low += bound
            self.range -= bound
        else:
            self.range = bound
        c[b] += 2
        if self.range < 1 << 24:
            self.fill()
        return b

    def raw(self, nbits, v):
        for i in range(nbits - 1, -1, -1):
            self.range >>= 1
            if v >> i & 1:
                self.low += self.range
            if self.range < 1 << 24:
                self.fill()
        return v

    def finish(self):
        for _ in range(5):
            self.shift()
        return bytes(self.out)


def fields(line, model):
    """(kind, fields) of a line the model gives back byte for byte, else (0, line)."""
    body = line[:-1] if line.endswith("\r") else line
    m = LINE.fullmatch(body)
    if not m or m[2] != m[9]:
        return 0, line
    ms = unpack.dt.datetime.strptime(m[1], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=unpack.dt.UTC)
    ms = int(ms.timestamp()) * 1000 + ms.microsecond // 1000
    lat = m[7].replace(".", "")
    f = (ms, m[2], m[3], m[4], int(m[5]), int(m[6]), int(lat), m[8], int(m[10]))
    if unpack.render(*f) != body or ms < model.ms:
        return 0, line
    if m[4] == "GET /healthz" and ms == model.health + 2000 and body == line:
        return 2, f
    return (3 if body != line else 1), f


def pack(data):
    text = data.decode("latin-1")
    lines = text.split("\n")
    tail = lines.pop()
    c, model, strings = Encoder(), unpack.Model(), []
    unpack.num(c, "count", len(lines))
    for line in lines:
        kind, f = fields(line, model)
        back = model.line(c, (kind, f), strings)
        assert kind == 0 or back == line, (line, back)
    strings.append(tail)
    side = lzma.compress("\n".join(strings).encode("latin-1"), preset=9 | lzma.PRESET_EXTREME)
    return len(side).to_bytes(4) + side + c.finish()


if __name__ == "__main__":
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    with open(sys.argv[2], "wb") as f:
        f.write(pack(data))
