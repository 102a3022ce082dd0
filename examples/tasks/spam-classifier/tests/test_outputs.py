import hashlib
from pathlib import Path

PREDICTIONS = Path("/app/predictions.txt")
TEST_TSV = Path("/app/data/test.tsv")
TEST_TSV_SHA256 = "32d4cd5e224a13fb44068ce216699832c06774c3fc6a596747646a6ff2163e45"
LABELS = Path(__file__).with_name("test_labels.tsv")
THRESHOLD = 0.85


def hidden_labels():
    lines = LABELS.read_text().splitlines()[1:]
    return [line.split("\t")[1].strip() for line in lines if line.strip()]


def predictions():
    assert PREDICTIONS.exists(), "missing /app/predictions.txt"
    lines = PREDICTIONS.read_text().splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    return [line.strip() for line in lines]


def test_test_data_unchanged():
    assert hashlib.sha256(TEST_TSV.read_bytes()).hexdigest() == TEST_TSV_SHA256


def test_one_prediction_per_test_row():
    assert len(predictions()) == len(hidden_labels())


def test_predictions_are_valid_labels():
    preds = predictions()
    assert preds, "no predictions"
    assert set(preds) <= {"spam", "ham"}, sorted(set(preds) - {"spam", "ham"})[:5]


def test_accuracy_meets_threshold():
    labels, preds = hidden_labels(), predictions()
    assert len(preds) == len(labels)
    correct = sum(p == y for p, y in zip(preds, labels))
    accuracy = correct / len(labels)
    print(f"accuracy = {accuracy:.4f} ({correct}/{len(labels)})")
    assert accuracy >= THRESHOLD, f"accuracy {accuracy:.4f} below {THRESHOLD}"
