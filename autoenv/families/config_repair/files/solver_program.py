import json, re, subprocess, sys
PARAMS: dict = {}  # filled in by the recipe (solver.embed)

P = PARAMS
sys.path.insert(0, "/app")
import service  # the launcher documents what it accepts in SCHEMA

WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]
TRUE, FALSE = {"yes", "on", "true", "1", "y", "enabled"}, {"no", "off", "false", "0", "n", "disabled"}
SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}


def number(key, raw):
    """A number as the old formats wrote it: in words, with a unit, in thousands (``5k``), a duration in ms/m/h."""
    low = raw.lower()
    if low in WORDS:
        return WORDS.index(low)
    m = re.match(r"^(-?\d+(?:\.\d+)?)\s*(ms|s|m|h)$", low) if key.endswith("_sec") else None
    if m:
        return float(m.group(1)) * SECONDS[m.group(2)]
    m = re.match(r"^(-?\d+(?:\.\d+)?)k$", low)
    if m:
        return float(m.group(1)) * 1000
    m = re.match(r"^(-?\d+(?:\.\d+)?)", raw)
    return float(m.group(1)) if m else None


def fix_value(kind, key, raw):
    raw = raw.strip()
    if isinstance(kind, (list, tuple)):
        for allowed in kind:
            if allowed.lower() == raw.lower():
                return allowed
        return raw
    if kind in ("int", "float"):
        x = number(key, raw)
        if x is None:
            return raw
        return str(int(round(x))) if kind == "int" else repr(float(x))
    if kind == "bool":
        low = raw.lower()
        return "true" if low in TRUE else "false" if low in FALSE else raw
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1]
    return raw


def repair(text):
    """The config as the launcher reads it: no byte-order mark, settings unindented, comments off the values,
    one header per section, every value in the format the launcher's SCHEMA accepts."""
    text = text.lstrip("\ufeff")
    sections, order, head = {}, [], []
    section = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", ";")):
            (sections[section] if section else head).append(stripped)
            continue
        m = re.match(r"^\[(.+)\]$", stripped)
        if m:
            section = m.group(1).strip()
            if section not in sections:
                sections[section] = []
                order.append(section)
            continue
        m = re.match(r"^([\w.-]+)\s*[=:]\s*(.*)$", stripped) or re.match(r"^([\w.-]+)\s+(.*)$", stripped)
        key, raw = (m.group(1), m.group(2)) if m else (stripped, "")
        key = key.lower()
        raw = re.sub(r"\s+[#;].*$", "", raw.strip())
        kind = service.SCHEMA.get(section, {}).get(key)
        sections.setdefault(section, []).append(f"{key} = {fix_value(kind, key, raw) if kind is not None else raw}")
    out = [line for line in head]
    for name in order:
        body = [line for line in sections[name] if line]
        out += [f"[{name}]", *body, ""]
    return "\n".join(out) + "\n"


if len(sys.argv) == 3:  # repair_config.py IN OUT
    with open(sys.argv[1], encoding="utf-8", newline="") as fh:
        fixed = repair(fh.read())
    with open(sys.argv[2], "w", encoding="utf-8") as fh:
        fh.write(fixed)
    sys.exit(0)
path = P["ini"]
with open(path, encoding="utf-8", newline="") as fh:
    fixed = repair(fh.read())
with open(path, "w", encoding="utf-8") as fh:
    fh.write(fixed)
check = subprocess.run([sys.executable, "service.py", "--check"], cwd="/app", capture_output=True, text=True)
print(check.stdout + check.stderr)
sys.exit(check.returncode)
