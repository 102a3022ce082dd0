#!/bin/bash
set -euo pipefail
cd /app
cat > /app/redact.py <<'PY'
#!/usr/bin/env python3
"""Redact e-mail addresses, card numbers, SSNs, phone numbers and IPv4 addresses."""

import re
import sys

B = r"(?<![A-Za-z0-9_])"   # not preceded by a word character
E = r"(?![A-Za-z0-9_])"    # not followed by a word character

EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![A-Za-z0-9-])")
CARD = re.compile(B + r"(?:\d{16}|\d{4}( |-)\d{4}\1\d{4}\1\d{4})" + E)
SSN = re.compile(B + r"\d{3}-\d{2}-\d{4}" + E)
PHONE = re.compile(
    r"(?:(?<![A-Za-z0-9_])\+1 )?"
    r"(?:\(\d{3}\) \d{3}-\d{4}|" + B + r"\d{3}-\d{3}-\d{4}|" + B + r"\d{3}\.\d{3}\.\d{4})" + E
)
OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
IPV4 = re.compile(B + r"(?<!\d\.)" + OCTET + r"(?:\." + OCTET + r"){3}" + r"(?!\.\d)" + E)


def luhn_ok(digits):
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch)
        if i % 2 == 1:
            n *= 2
            if n > 9:
                n -= 9
        total += n
    return total % 10 == 0


def _card(match):
    digits = re.sub(r"\D", "", match.group(0))
    return "[CARD]" if luhn_ok(digits) else match.group(0)


def redact(text):
    text = EMAIL.sub("[EMAIL]", text)
    text = CARD.sub(_card, text)
    text = SSN.sub("[SSN]", text)
    text = PHONE.sub("[PHONE]", text)
    text = IPV4.sub("[IP]", text)
    return text


def main(argv):
    # Work on bytes decoded as UTF-8 so that line endings are kept verbatim.
    if len(argv) > 1:
        with open(argv[1], "rb") as fh:
            raw = fh.read()
    else:
        raw = sys.stdin.buffer.read()
    sys.stdout.buffer.write(redact(raw.decode("utf-8")).encode("utf-8"))
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv)
PY
chmod +x /app/redact.py
python3 /app/redact.py /app/tickets.txt > /app/tickets_redacted.txt
