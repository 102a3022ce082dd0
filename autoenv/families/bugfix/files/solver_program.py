"""Fix every known helper the report imports (level 5: every module of the package): each function of a known kind
gets its known-correct body."""
import ast, json, os, sys
PARAMS: dict = {}  # filled in by the recipe (solver.embed)

P = PARAMS
APP = P["app"]
if P.get("package"):  # level 5: every module of the package
    modules = sorted(f[:-3] for f in os.listdir(os.path.join(APP, P["package"])) if f.endswith(".py"))
    folder = os.path.join(APP, P["package"])
else:
    report = ast.parse(open(os.path.join(APP, "report.py")).read())
    modules = sorted({a.name for n in ast.walk(report) if isinstance(n, ast.Import) for a in n.names}
                     | {n.module for n in ast.walk(report) if isinstance(n, ast.ImportFrom) and n.module})
    folder = APP
for module in modules:
    path = os.path.join(folder, module + ".py")
    if not os.path.isfile(path):
        continue  # the standard library
    for name, body in P["bodies"].items():
        source = open(path).read()
        tree = ast.parse(source)
        target = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
        if target is None:
            continue
        params = [a.arg for a in target.args.args]
        first = target.body[0]
        doc = isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant)
        start = first.end_lineno if doc else first.lineno - 1
        lines = source.splitlines(keepends=True)
        indent = " " * first.col_offset
        new = "".join(indent + ln if ln.strip() else ln for ln in body.format(*params).splitlines(keepends=True))
        lines[start:target.end_lineno] = [new]
        open(path, "w").write("".join(lines))
        compile(open(path).read(), path, "exec")
        print(f"patched {module}.{name}")
