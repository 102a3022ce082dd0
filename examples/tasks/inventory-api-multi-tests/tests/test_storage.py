import json
from pathlib import Path

import pytest
from agentcall import agent_module, read_agent_file  # the agent's code runs as nobody, never in pytest

storage = agent_module("inventory.storage", fresh=False)
models = agent_module("inventory.models", fresh=False)
Inventory, Item, ValidationError = models.Inventory, models.Item, models.ValidationError


@pytest.fixture()
def tmp_path():
    """A folder the agent's code (nobody) can write to and the tests read: pytest's own is the grader's alone."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="inventory-", dir="/tmp"))
    folder.chmod(0o777)
    return folder



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
    data = json.loads(read_agent_file(path))
    assert data == {"items": dicts(sample())}
    assert [i["sku"] for i in data["items"]] == ["ALPHA1", "MID5", "ZED9"]


def test_save_leaves_only_target(tmp_path):
    path = tmp_path / "inv.json"
    storage.save(sample(), path)
    storage.save(Inventory(), path)
    assert [p.name for p in tmp_path.iterdir()] == ["inv.json"]
    assert json.loads(read_agent_file(path)) == {"items": []}


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
    before = read_agent_file(path)
    broken = sample()
    models.run("item.price_cents = object()", item=broken.get("MID5"))  # not JSON serialisable
    with pytest.raises(Exception):
        storage.save(broken, path)
    assert read_agent_file(path) == before
    assert dicts(storage.load(path)) == dicts(sample())
