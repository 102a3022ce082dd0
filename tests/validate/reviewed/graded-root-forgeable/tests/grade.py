"""Graded: the reward is the share of conversions that are right."""
import sys
sys.path.insert(0, "/app")
CASES = [(1, "km", "m", 1000), (2.5, "m", "cm", 250), (12, "in", "ft", 1), (3, "ft", "in", 36), (1, "mi", "km", 1.609344),
         (5000, "m", "km", 5), (30.48, "cm", "ft", 1), (2, "km", "mi", 1.2427423844746679), (0, "m", "in", 0), (1, "m", "in", 39.37007874015748)]
try:
    from convert import convert
except Exception as exc:
    print("cannot import convert:", exc)
    right = 0
else:
    right = 0
    for value, src, dst, want in CASES:
        try:
            got = convert(value, src, dst)
        except Exception as exc:
            print(f"convert({value}, {src!r}, {dst!r}) raised {exc!r}")
            continue
        ok = abs(got - want) <= 1e-6 * max(1, abs(want))
        right += ok
        print(f"convert({value}, {src!r}, {dst!r}) = {got} ({'ok' if ok else f'want {want}'})")
print(f"{right}/{len(CASES)}")
open(sys.argv[1], "w").write(f"{right / len(CASES):g}")
