import json, re, subprocess, sys
PARAMS: dict = {}  # filled in by the recipe (solver.embed)

P = PARAMS
sys.path.insert(0, "/app")
import service  # the launcher documents what it accepts in SCHEMA

WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]
TRUE, FALSE = {"yes", "on", "true", "1", "y"}, {"no", "off", "false", "0", "n"}

def fix_value(kind, raw):
    raw = raw.strip()
    if isinstance(kind, (list, tuple)):
        for allowed in kind:
            if allowed.lower() == raw.lower():
                return allowed
        return raw
    if kind == "int":
        if raw.lower() in WORDS:
            return str(WORDS.index(raw.lower()))
        m = re.match(r"^(-?\d+)", raw)
        return m.group(1) if m else raw
    if kind == "float":
        m = re.match(r"^(-?\d+(?:\.\d+)?)", raw)
        return m.group(1) if m else raw
    if kind == "bool":
        low = raw.lower()
        return "true" if low in TRUE else "false" if low in FALSE else raw
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1]
    return raw

path = P["ini"]
section = None
out = []
for line in open(path).read().split("\n"):
    stripped = line.strip()
    if not stripped or stripped.startswith(("#", ";")):
        out.append(line)
        continue
    m = re.match(r"^\[(.+)\]$", stripped)
    if m:
        section = m.group(1)
        out.append(line)
        continue
    if "=" in stripped:
        key, raw = stripped.split("=", 1)
    elif ":" in stripped:
        key, raw = stripped.split(":", 1)
    else:
        key, _, raw = stripped.partition(" ")
    key = key.strip()
    kind = service.SCHEMA.get(section, {}).get(key)
    out.append(f"{key} = {fix_value(kind, raw) if kind is not None else raw.strip()}")
open(path, "w").write("\n".join(out))
check = subprocess.run([sys.executable, "service.py", "--check"], cwd="/app", capture_output=True, text=True)
print(check.stdout + check.stderr)
sys.exit(check.returncode)
