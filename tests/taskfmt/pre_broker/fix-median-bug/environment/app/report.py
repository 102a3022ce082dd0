"""Prints a summary of the response times in latencies.txt (one number per line)."""

import sys

from stats_utils import summarize


def main(path="latencies.txt"):
    with open(path) as fh:
        values = [float(line) for line in fh if line.strip()]
    for key, value in summarize(values).items():
        print(f"{key:>6}: {value:.3f}" if isinstance(value, float) else f"{key:>6}: {value}")


if __name__ == "__main__":
    main(*sys.argv[1:])
