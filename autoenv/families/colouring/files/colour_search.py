"""colour_search.py INPUT OUT: a sheet giving each item one of K classes with no clash, by tabu search inside an
evolutionary algorithm, for a bounded time.

The clash graph from the task's files, by the reader PARAMS name (the panel: amplicons that overlap or whose
primers form a dimer at or below the threshold; pairs: a list of items and a table of clashing pairs; log: a list of
items and the pairs that the instruction's line formats find in a log), then Galinier and Hao's hybrid: a population
of TabuCol runs, each child the greedy partition crossover (GPX) of two parents improved by TabuCol, the
worst replaced. It stops at a sheet without clashes or when the time is up, and writes the best sheet it has either
way (it prints how many clashes that sheet still has).
"""
import csv, json, random, re, sys, time
PARAMS: dict = {}  # filled in by the recipe (solver.embed)

K, BUDGET = PARAMS["colours"], PARAMS["budget_s"]


def rows(path):
    with open(path, newline="") as fh:
        return list(csv.reader(fh, delimiter="\t"))[1:]


def panel_graph(panel):
    """Amplicons (a folder of amplicons.tsv and dimers.tsv) that may not share a pool."""
    threshold = PARAMS["threshold"]
    amplicons = rows(f"{panel}/amplicons.tsv")
    names = [r[0] for r in amplicons]
    index = {name: i for i, name in enumerate(names)}
    owner = {}
    for name, _c, _s, _e, f, r in amplicons:
        owner[f] = owner[r] = index[name]
    edges = set()
    by_chrom = {}
    for name, chrom, start, end, _f, _r in amplicons:
        by_chrom.setdefault(chrom, []).append((int(start), int(end), index[name]))
    for regions in by_chrom.values():
        regions.sort()
        for i, (_s, end, a) in enumerate(regions):
            for start, _e, b in regions[i + 1:]:
                if start >= end:
                    break
                edges.add((min(a, b), max(a, b)))
    for pa, pb, dg in rows(f"{panel}/dimers.tsv"):
        a, b = owner[pa], owner[pb]
        if float(dg) <= threshold and a != b:
            edges.add((min(a, b), max(a, b)))
    return names, adjacency(len(names), edges)


def items(source):
    """The items, one per line of the items file, and each one's index."""
    names = open(f"{source}/{PARAMS['items']}").read().split()
    return names, {name: i for i, name in enumerate(names)}


def pairs_graph(source):
    """Items and the pairs of the clash table (a TSV with a header), either way."""
    names, index = items(source)
    edges = {tuple(sorted((index[a], index[b]))) for a, b, *_ in rows(f"{source}/{PARAMS['clashes']}") if a != b}
    return names, adjacency(len(names), edges)


def log_graph(source):
    """Items and the pairs that a line format (a regex, two groups) finds in the log."""
    names, index = items(source)
    text = open(f"{source}/{PARAMS['log']}", encoding="utf-8", errors="replace").read()
    edges = set()
    for pattern in PARAMS["patterns"]:
        for a, b in re.findall(pattern, text):
            if a != b and a in index and b in index:
                edges.add(tuple(sorted((index[a], index[b]))))
    return names, adjacency(len(names), edges)


READERS = {"panel": panel_graph, "pairs": pairs_graph, "log": log_graph}


def adjacency(n, edges):
    adj = [[] for _ in range(n)]
    for a, b in edges:
        adj[a].append(b)
        adj[b].append(a)
    return adj


def tabucol(adj, col, iters, rng):
    """Tabu search on the number of clashes from ``col``: the best sheet seen and its clashes."""
    n = len(adj)
    gamma = [[0] * K for _ in range(n)]
    for v in range(n):
        for u in adj[v]:
            gamma[v][col[u]] += 1
    clashes = sum(gamma[v][col[v]] for v in range(n)) // 2
    conflicted = {v for v in range(n) if gamma[v][col[v]]}
    tabu = {}
    best, best_col = clashes, col[:]
    for it in range(iters):
        if not clashes:
            break
        delta, moves = None, []
        for v in conflicted:
            g, cv = gamma[v], col[v]
            for k in range(K):
                if k == cv:
                    continue
                d = g[k] - g[cv]
                if delta is not None and d > delta:
                    continue
                if tabu.get((v, k), -1) > it and clashes + d >= best:
                    continue
                if delta is None or d < delta:
                    delta, moves = d, [(v, k)]
                else:
                    moves.append((v, k))
        if not moves:
            continue
        v, k = rng.choice(moves)
        old, col[v] = col[v], k
        clashes += delta
        tabu[(v, old)] = it + int(0.6 * len(conflicted)) + rng.randrange(10)
        for u in adj[v]:
            gu = gamma[u]
            gu[old] -= 1
            gu[k] += 1
            if gu[col[u]]:
                conflicted.add(u)
            else:
                conflicted.discard(u)
        if gamma[v][k]:
            conflicted.add(v)
        else:
            conflicted.discard(v)
        if clashes < best:
            best, best_col = clashes, col[:]
    return best, best_col


def gpx(a, b, n, rng):
    """Greedy partition crossover: the largest class of each parent in turn, its items taken out of both."""
    parents = [[{v for v in range(n) if p[v] == k} for k in range(K)] for p in (a, b)]
    child = [-1] * n
    for pool in range(K):
        taken = set(max(parents[pool % 2], key=len))
        for v in taken:
            child[v] = pool
        for parent in parents:
            for members in parent:
                members -= taken
    return [c if c >= 0 else rng.randrange(K) for c in child]


def main(source, out):
    started = time.monotonic()
    names, adj = READERS[PARAMS.get("reader", "panel")](source)
    n, rng = len(names), random.Random(PARAMS.get("seed", 1))
    population = [tabucol(adj, [rng.randrange(K) for _ in range(n)], 2000, rng) for _ in range(10)]
    while min(population)[0] and time.monotonic() - started < BUDGET:
        a, b = rng.sample(range(len(population)), 2)
        child = tabucol(adj, gpx(population[a][1], population[b][1], n, rng), 6000, rng)
        population.sort(key=lambda p: p[0])
        population[-1] = child
    clashes, col = min(population, key=lambda p: p[0])
    sep = PARAMS["separator"]
    with open(out, "w", newline="") as fh:
        fh.write(sep.join(PARAMS["header"]) + "\n" + "".join(f"{name}{sep}{col[i] + 1}\n" for i, name in enumerate(names)))
    print(json.dumps({"items": n, "clashes_left": clashes, "seconds": round(time.monotonic() - started, 1)}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
