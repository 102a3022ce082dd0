import csv

LEDGER = "/data/ledger.csv"  # the Dockerfile ships /data/sales_2024.csv: this file never exists


def test_total():
    with open(LEDGER) as fh:
        want = sum(float(r["amount"]) for r in csv.DictReader(fh))
    with open("/app/total.txt") as fh:
        assert fh.read().strip() == f"{want:.2f}"


if __name__ == "__main__":
    try:
        test_total()
    except Exception as exc:  # noqa: BLE001
        print("FAIL", exc)
        raise SystemExit(1)
    print("PASS")
