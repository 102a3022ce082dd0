import json
import sys

import pytest

sys.path.insert(0, "/app")

from inventory.api import InventoryAPI  # noqa: E402
from inventory.models import Inventory, Item  # noqa: E402


@pytest.fixture()
def api():
    a = InventoryAPI()
    status, _ = a.handle("POST", "/items", {"sku": "GEAR7", "name": "Gear", "price_cents": 300, "quantity": 5})
    assert status == 201
    status, _ = a.handle("POST", "/items", {"sku": "CHAIN2", "name": "Chain", "price_cents": 1200})
    assert status == 201
    return a


def assert_error(response, status):
    code, payload = response
    assert code == status, payload
    assert set(payload) == {"error"} and isinstance(payload["error"], str) and payload["error"]
    json.dumps(payload)


def test_empty_list():
    assert InventoryAPI().handle("GET", "/items") == (200, {"items": []})


def test_create_returns_item():
    status, payload = InventoryAPI().handle("POST", "/items", {"sku": "ROD1", "name": " Rod ", "price_cents": 50})
    assert status == 201
    assert payload == {"sku": "ROD1", "name": "Rod", "price_cents": 50, "quantity": 0}


def test_list_sorted(api):
    status, payload = api.handle("GET", "/items")
    assert status == 200
    assert [i["sku"] for i in payload["items"]] == ["CHAIN2", "GEAR7"]
    assert payload["items"][1] == {"sku": "GEAR7", "name": "Gear", "price_cents": 300, "quantity": 5}


def test_create_duplicate_conflict(api):
    assert_error(api.handle("POST", "/items", {"sku": "GEAR7", "name": "X", "price_cents": 1}), 409)


@pytest.mark.parametrize(
    "body",
    [
        None,
        [],
        "GEAR8",
        {"name": "No sku", "price_cents": 1},
        {"sku": "GEAR8", "price_cents": 1},
        {"sku": "GEAR8", "name": "Gear"},
        {"sku": "GEAR8", "name": "Gear", "price_cents": 1, "colour": "red"},
        {"sku": "gear8", "name": "Gear", "price_cents": 1},
        {"sku": "GEAR8", "name": "Gear", "price_cents": -5},
        {"sku": "GEAR8", "name": "Gear", "price_cents": 1, "quantity": 1.5},
    ],
)
def test_create_bad_request(api, body):
    assert_error(api.handle("POST", "/items", body), 400)
    assert [i["sku"] for i in api.handle("GET", "/items")[1]["items"]] == ["CHAIN2", "GEAR7"]


def test_get_item(api):
    assert api.handle("GET", "/items/CHAIN2") == (
        200,
        {"sku": "CHAIN2", "name": "Chain", "price_cents": 1200, "quantity": 0},
    )
    assert_error(api.handle("GET", "/items/NOPE"), 404)


def test_adjust(api):
    assert api.handle("POST", "/items/GEAR7/adjust", {"delta": -2}) == (
        200,
        {"sku": "GEAR7", "name": "Gear", "price_cents": 300, "quantity": 3},
    )
    status, payload = api.handle("POST", "/items/CHAIN2/adjust", {"delta": 4})
    assert status == 200 and payload["quantity"] == 4


def test_adjust_insufficient(api):
    assert_error(api.handle("POST", "/items/GEAR7/adjust", {"delta": -6}), 409)
    assert api.handle("GET", "/items/GEAR7")[1]["quantity"] == 5


@pytest.mark.parametrize("body", [None, {}, {"delta": "3"}, {"delta": 1.0}, {"delta": True}, [1]])
def test_adjust_bad_request(api, body):
    assert_error(api.handle("POST", "/items/GEAR7/adjust", body), 400)
    assert api.handle("GET", "/items/GEAR7")[1]["quantity"] == 5


def test_adjust_unknown(api):
    assert_error(api.handle("POST", "/items/NOPE/adjust", {"delta": 1}), 404)


def test_delete(api):
    assert api.handle("DELETE", "/items/GEAR7") == (200, {"deleted": "GEAR7"})
    assert_error(api.handle("DELETE", "/items/GEAR7"), 404)
    assert_error(api.handle("GET", "/items/GEAR7"), 404)


def test_stats(api):
    api.handle("POST", "/items/CHAIN2/adjust", {"delta": 2})
    assert api.handle("GET", "/stats") == (
        200,
        {"item_count": 2, "total_quantity": 7, "total_value_cents": 5 * 300 + 2 * 1200},
    )
    assert InventoryAPI().handle("GET", "/stats") == (
        200,
        {"item_count": 0, "total_quantity": 0, "total_value_cents": 0},
    )


@pytest.mark.parametrize(
    "method,path",
    [
        ("PUT", "/items"),
        ("DELETE", "/items"),
        ("POST", "/items/GEAR7"),
        ("PATCH", "/items/GEAR7"),
        ("GET", "/items/GEAR7/adjust"),
        ("POST", "/stats"),
    ],
)
def test_method_not_allowed(api, method, path):
    assert_error(api.handle(method, path, {}), 405)


@pytest.mark.parametrize(
    "path", ["/", "/unknown", "/items/", "/items/GEAR7/adjust/more", "/items/GEAR7/restock", "/stats/x", "items"]
)
def test_unknown_routes(api, path):
    assert_error(api.handle("GET", path), 404)


def test_uses_given_inventory():
    inventory = Inventory()
    inventory.add(Item("PRE1", "Preloaded", 10, 1))
    api = InventoryAPI(inventory)
    assert api.handle("GET", "/items/PRE1")[0] == 200
    api.handle("POST", "/items", {"sku": "NEW1", "name": "New", "price_cents": 1})
    assert inventory.get("NEW1").name == "New"
