"""Graded: the reward is the share of conversions that are right.

The grader stays root; the agent's function runs in a subprocess as nobody, which can neither write
/logs/verifier nor read these files.
"""
import subprocess
import sys
CASES = [(1, "km", "m", 1000), (2.5, "m", "cm", 250), (12, "in", "ft", 1), (3, "ft", "in", 36), (1, "mi", "km", 1.609344),
         (5000, "m", "km", 5), (30.48, "cm", "ft", 1), (2, "km", "mi", 1.2427423844746679), (0, "m", "in", 0), (1, "m", "in", 39.37007874015748)]
CALL = "import sys; sys.path.insert(0, '/app'); from convert import convert; print(repr(float(convert(float(sys.argv[1]), sys.argv[2], sys.argv[3]))))"
right = 0
for value, src, dst, want in CASES:
    out = subprocess.run([sys.executable, "-I", "-c", CALL, str(value), src, dst], capture_output=True, text=True, timeout=20,
                         cwd="/tmp", user=65534, group=65534, extra_groups=[])
    try:
        got = float(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        print(f"convert({value}, {src!r}, {dst!r}) failed: {out.stderr.strip()[-200:]}")
        continue
    ok = abs(got - want) <= 1e-6 * max(1, abs(want))
    right += ok
    print(f"convert({value}, {src!r}, {dst!r}) = {got} ({'ok' if ok else f'want {want}'})")
print(f"{right}/{len(CASES)}")
print(f"{right / len(CASES):g}", file=open(sys.argv[1], "w"))
