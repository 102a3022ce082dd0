"""Small descriptive-statistics helpers used by the reporting jobs."""

import math


def mean(values):
    """Arithmetic mean of a non-empty sequence of numbers."""
    if len(values) == 0:
        raise ValueError("mean() of empty data")
    return sum(values) / len(values)


def median(values):
    """Return the median of a non-empty sequence of numbers.

    For an odd number of values this is the middle value of the sorted data;
    for an even number it is the mean of the two middle values.
    """
    n = len(values)
    mid = n // 2
    if n % 2 == 1:
        return values[mid]
    return (values[mid] + values[mid + 1]) / 2


def mad(values):
    """Median absolute deviation: median(|x - median(values)|)."""
    m = median(values)
    return median([abs(x - m) for x in values])


def stdev(values):
    """Sample standard deviation (n - 1 in the denominator)."""
    if len(values) < 2:
        raise ValueError("stdev() requires at least two data points")
    mu = mean(values)
    return math.sqrt(sum((x - mu) ** 2 for x in values) / (len(values) - 1))


def summarize(values):
    """Return a dict with count, mean, median, mad and stdev of the values."""
    return {
        "count": len(values),
        "mean": mean(values),
        "median": median(values),
        "mad": mad(values),
        "stdev": stdev(values) if len(values) > 1 else 0.0,
    }
