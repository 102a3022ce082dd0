"""tmcalc.py FASTA OUTDIR: the primers' melting temperatures (tm_report.tsv) and their pairs (pairs.tsv)."""
import json, math, re, sys
PARAMS: dict = {}  # filled in by the recipe (solver.embed)


def protocol(path):
    """The rules from the lab's settings file: ``key = value  # comment`` lines; salt in millimolar."""
    conf = {}
    for line in open(path, encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if "=" in line:
            key, value = (part.strip() for part in line.split("=", 1))
            conf[key] = value
    short = int(conf["short_below"]) if "short_below" in conf else int(conf["wallace_max_len"]) + 1
    return {"formula": conf["method"], "na": float(conf["sodium_mM"]) / 1000, "short": short,
            "max_delta": float(conf["max_delta_c"])}


P = protocol(PARAMS["protocol"]) if "protocol" in PARAMS else PARAMS


def tm(seq):
    at, gc, n = seq.count("A") + seq.count("T"), seq.count("G") + seq.count("C"), len(seq)
    if n < P["short"]:
        return 2 * at + 4 * gc
    if P["formula"] == "basic":
        return 64.9 + 41 * (gc - 16.4) / n
    return 81.5 + 16.6 * math.log10(P["na"]) + 0.41 * (100 * gc / n) - 675 / n


def main(fasta, outdir):
    records = []
    with open(fasta, encoding="utf-8", errors="replace", newline="") as fh:
        for line in re.split(r"\r?\n", fh.read()):
            line = line.strip()
            if line.startswith(">"):
                records.append([line[1:].split()[0], ""])
            elif line and records:
                records[-1][1] += "".join(c for c in line.upper() if c in "ACGT")
    temps, order = {}, []
    with open(f"{outdir}/tm_report.tsv", "w") as out:
        out.write("name\tlength\tgc_percent\ttm\n")
        for name, seq in records:
            temps[name] = tm(seq)
            gc = 100 * (seq.count("G") + seq.count("C")) / len(seq)
            out.write(f"{name}\t{len(seq)}\t{gc:.1f}\t{temps[name]:.1f}\n")
            if name[-2:] in ("_F", "_R") and name[:-2] not in order:
                order.append(name[:-2])
    with open(f"{outdir}/pairs.tsv", "w") as out:
        out.write("pair\tdelta_tm\tcompatible\n")
        for tag in order:
            if tag + "_F" in temps and tag + "_R" in temps:
                d = abs(temps[tag + "_F"] - temps[tag + "_R"])
                out.write(f"{tag}\t{d:.1f}\t{'yes' if d <= P['max_delta'] else 'no'}\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
