import sys

lines = open(sys.argv[1]).read().splitlines()
print("mean line length:", sum(len(x) for x in lines) / len(lines))
