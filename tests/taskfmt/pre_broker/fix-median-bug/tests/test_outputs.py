import importlib
import random
import statistics
import subprocess
import sys

import pytest

sys.path.insert(0, "/app")


@pytest.fixture()
def su():
    sys.modules.pop("stats_utils", None)
    return importlib.import_module("stats_utils")


@pytest.mark.parametrize(
    "values",
    [
        [5],
        [3, 1, 2],
        [4, 1, 3, 2],
        [10, -2, 7, 7, 0],
        [2.5, -1.25, 9.0, 3.75],
        [1, 1, 1, 1],
        [100, 1],
        [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
    ],
)
def test_median_known_cases(su, values):
    assert su.median(values) == pytest.approx(statistics.median(values))


def test_median_random_lists_match_reference(su):
    rng = random.Random(20240611)
    for _ in range(300):
        n = rng.randint(1, 40)
        if rng.random() < 0.5:
            values = [rng.randint(-50, 50) for _ in range(n)]
        else:
            values = [rng.uniform(-1e3, 1e3) for _ in range(n)]
        assert su.median(values) == pytest.approx(statistics.median(values)), values


def test_even_length_is_mean_of_two_middle_values(su):
    assert su.median([1, 3]) == pytest.approx(2.0)
    assert su.median([40, 10, 30, 20]) == pytest.approx(25.0)


def test_median_accepts_tuples(su):
    assert su.median((7, 3, 5)) == 5
    assert su.median((8, 2, 6, 4)) == pytest.approx(5.0)


def test_median_empty_raises_value_error(su):
    with pytest.raises(ValueError):
        su.median([])
    with pytest.raises(ValueError):
        su.median(())


def test_median_does_not_mutate_input(su):
    values = [9, 1, 8, 2, 7, 3]
    snapshot = list(values)
    su.median(values)
    assert values == snapshot


def test_mad_is_correct(su):
    rng = random.Random(99)
    for _ in range(100):
        values = [rng.randint(0, 100) for _ in range(rng.randint(1, 25))]
        m = statistics.median(values)
        expected = statistics.median([abs(x - m) for x in values])
        assert su.mad(values) == pytest.approx(expected), values


def test_other_helpers_still_work(su):
    values = [2, 4, 4, 4, 5, 5, 7, 9]
    assert su.mean(values) == pytest.approx(statistics.mean(values))
    assert su.stdev(values) == pytest.approx(statistics.stdev(values))
    summary = su.summarize(values)
    assert summary["count"] == len(values)
    assert summary["median"] == pytest.approx(statistics.median(values))
    with pytest.raises(ValueError):
        su.mean([])


def test_report_script_prints_correct_median():
    with open("/app/latencies.txt") as fh:
        values = [float(line) for line in fh if line.strip()]
    assert len(values) >= 5
    out = subprocess.run(
        [sys.executable, "report.py"], cwd="/app", capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 0, out.stderr
    lines = {}
    for line in out.stdout.splitlines():
        key, _, value = line.partition(":")
        lines[key.strip()] = value.strip()
    assert float(lines["median"]) == pytest.approx(statistics.median(values), abs=1e-3)
    m = statistics.median(values)
    expected_mad = statistics.median([abs(x - m) for x in values])
    assert float(lines["mad"]) == pytest.approx(expected_mad, abs=1e-3)
