import sys

import pytest

sys.path.insert(0, "/app")

from inventory.models import (  # noqa: E402
    ConflictError,
    InsufficientStockError,
    Inventory,
    Item,
    NotFoundError,
    ValidationError,
)


def test_item_valid_and_to_dict():
    item = Item("ABC123", "  Blue widget ", 1999, 3)
    assert item.name == "Blue widget"
    assert item.to_dict() == {"sku": "ABC123", "name": "Blue widget", "price_cents": 1999, "quantity": 3}


def test_item_default_quantity_zero():
    assert Item("XYZ", "Thing", 0).quantity == 0


@pytest.mark.parametrize("sku", ["ABC", "A1B2C3D4E5F6", "123", "Z9Z"])
def test_valid_skus(sku):
    assert Item(sku, "n", 1).sku == sku


@pytest.mark.parametrize("sku", ["AB", "ABCDEFGHIJKLM", "abc123", "AB-12", "ABC 1", "", None, 123, " ABC"])
def test_invalid_skus(sku):
    with pytest.raises(ValidationError):
        Item(sku, "name", 100)


@pytest.mark.parametrize("name", ["", "   ", None, 5])
def test_invalid_names(name):
    with pytest.raises(ValidationError):
        Item("ABC", name, 100)


@pytest.mark.parametrize("price", [-1, 1.0, True, "100", None])
def test_invalid_prices(price):
    with pytest.raises(ValidationError):
        Item("ABC", "name", price)


@pytest.mark.parametrize("quantity", [-1, 2.5, False, "3"])
def test_invalid_quantities(quantity):
    with pytest.raises(ValidationError):
        Item("ABC", "name", 100, quantity)


@pytest.fixture()
def inv():
    inventory = Inventory()
    inventory.add(Item("BOLT10", "Bolt", 25, 100))
    inventory.add(Item("AXLE01", "Axle", 1500, 2))
    inventory.add(Item("NUT10", "Nut", 10, 0))
    return inventory


def test_add_get_and_conflict(inv):
    assert inv.get("AXLE01").name == "Axle"
    with pytest.raises(ConflictError):
        inv.add(Item("AXLE01", "Other axle", 1, 1))
    assert inv.get("AXLE01").name == "Axle"


def test_get_unknown(inv):
    with pytest.raises(NotFoundError):
        inv.get("NOPE")


def test_remove(inv):
    removed = inv.remove("BOLT10")
    assert removed.sku == "BOLT10"
    with pytest.raises(NotFoundError):
        inv.get("BOLT10")
    with pytest.raises(NotFoundError):
        inv.remove("BOLT10")


def test_list_sorted_by_sku(inv):
    assert [i.sku for i in inv.list()] == ["AXLE01", "BOLT10", "NUT10"]
    assert Inventory().list() == []


def test_adjust(inv):
    assert inv.adjust("NUT10", 7) == 7
    assert inv.adjust("NUT10", -7) == 0
    assert inv.get("NUT10").quantity == 0


def test_adjust_insufficient_leaves_quantity(inv):
    with pytest.raises(InsufficientStockError):
        inv.adjust("AXLE01", -3)
    assert inv.get("AXLE01").quantity == 2


@pytest.mark.parametrize("delta", [1.5, True, "2", None])
def test_adjust_invalid_delta(inv, delta):
    with pytest.raises(ValidationError):
        inv.adjust("BOLT10", delta)
    assert inv.get("BOLT10").quantity == 100


def test_adjust_unknown(inv):
    with pytest.raises(NotFoundError):
        inv.adjust("NOPE", 1)


def test_total_value(inv):
    assert inv.total_value_cents() == 25 * 100 + 1500 * 2
    assert Inventory().total_value_cents() == 0


def test_low_stock_strictly_below(inv):
    assert inv.low_stock(2) == ["NUT10"]
    assert inv.low_stock(3) == ["AXLE01", "NUT10"]
    assert inv.low_stock(0) == []
