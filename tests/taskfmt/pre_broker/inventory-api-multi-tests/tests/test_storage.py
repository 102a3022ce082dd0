import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, "/app")

from inventory import storage  # noqa: E402
from inventory.models import Inventory, Item, ValidationError  # noqa: E402


def sample():
    inv = Inventory()
    inv.add(Item("ZED9", "Zed", 999, 1))
    inv.add(Item("ALPHA1", "Alpha", 100, 10))
    inv.add(Item("MID5", "Middle, with comma", 0, 0))
    return inv


def dicts(inv):
    return [i.to_dict() for i in inv.list()]


def test_round_trip(tmp_path):
    path = tmp_path / "inv.json"
    storage.save(sample(), path)
    loaded = storage.load(path)
    assert isinstance(loaded, Inventory)
    assert dicts(loaded) == dicts(sample())


def test_file_format(tmp_path):
    path = tmp_path / "inv.json"
    storage.save(sample(), str(path))
    data = json.loads(path.read_text())
    assert data == {"items": dicts(sample())}
    assert [i["sku"] for i in data["items"]] == ["ALPHA1", "MID5", "ZED9"]


def test_save_leaves_only_target(tmp_path):
    path = tmp_path / "inv.json"
    storage.save(sample(), path)
    storage.save(Inventory(), path)
    assert [p.name for p in tmp_path.iterdir()] == ["inv.json"]
    assert json.loads(path.read_text()) == {"items": []}


def test_missing_file_gives_empty_inventory(tmp_path):
    loaded = storage.load(tmp_path / "absent.json")
    assert isinstance(loaded, Inventory)
    assert loaded.list() == []


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "[]",
        '{"things": []}',
        '{"items": {}}',
        '{"items": [{"sku": "bad sku", "name": "X", "price_cents": 1, "quantity": 0}]}',
        '{"items": [{"sku": "OK1", "name": "X", "price_cents": -1, "quantity": 0}]}',
        '{"items": [{"sku": "OK1", "name": "X"}]}',
        '{"items": [{"sku": "OK1", "name": "X", "price_cents": 1, "quantity": 0},'
        ' {"sku": "OK1", "name": "Y", "price_cents": 2, "quantity": 0}]}',
    ],
)
def test_invalid_files_raise_validation_error(tmp_path, content):
    path = tmp_path / "inv.json"
    path.write_text(content)
    with pytest.raises(ValidationError):
        storage.load(path)


def test_failed_save_keeps_previous_file(tmp_path):
    path = tmp_path / "inv.json"
    storage.save(sample(), path)
    before = path.read_text()
    broken = sample()
    broken.get("MID5").price_cents = object()  # not JSON serialisable
    with pytest.raises(Exception):
        storage.save(broken, path)
    assert path.read_text() == before
    assert dicts(storage.load(path)) == dicts(sample())
