#!/bin/bash
set -euo pipefail
cd /app
cat > /app/inventory/models.py <<'PY'
"""Domain model for the inventory service. See /app/SPEC.md."""

import re
from dataclasses import dataclass

SKU_RE = re.compile(r"[A-Z0-9]{3,12}")


class ValidationError(Exception):
    """Invalid field values."""


class NotFoundError(Exception):
    """Unknown SKU."""


class ConflictError(Exception):
    """SKU already exists."""


class InsufficientStockError(Exception):
    """A stock adjustment would make the quantity negative."""


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass
class Item:
    sku: str
    name: str
    price_cents: int
    quantity: int = 0

    def __post_init__(self):
        if not isinstance(self.sku, str) or not SKU_RE.fullmatch(self.sku):
            raise ValidationError(f"invalid sku: {self.sku!r}")
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValidationError("name must be a non-empty string")
        self.name = self.name.strip()
        if not _is_int(self.price_cents) or self.price_cents < 0:
            raise ValidationError("price_cents must be a non-negative integer")
        if not _is_int(self.quantity) or self.quantity < 0:
            raise ValidationError("quantity must be a non-negative integer")

    def to_dict(self):
        return {
            "sku": self.sku,
            "name": self.name,
            "price_cents": self.price_cents,
            "quantity": self.quantity,
        }


class Inventory:
    def __init__(self):
        self._items = {}

    def add(self, item):
        if not isinstance(item, Item):
            raise ValidationError("expected an Item")
        if item.sku in self._items:
            raise ConflictError(f"sku already exists: {item.sku}")
        self._items[item.sku] = item
        return item

    def get(self, sku):
        try:
            return self._items[sku]
        except (KeyError, TypeError):
            raise NotFoundError(f"unknown sku: {sku!r}") from None

    def remove(self, sku):
        item = self.get(sku)
        del self._items[item.sku]
        return item

    def adjust(self, sku, delta):
        item = self.get(sku)
        if not _is_int(delta):
            raise ValidationError("delta must be an integer")
        new_quantity = item.quantity + delta
        if new_quantity < 0:
            raise InsufficientStockError(
                f"cannot remove {-delta} from {item.sku}: only {item.quantity} in stock"
            )
        item.quantity = new_quantity
        return new_quantity

    def list(self):
        return [self._items[sku] for sku in sorted(self._items)]

    def total_value_cents(self):
        return sum(i.price_cents * i.quantity for i in self._items.values())

    def low_stock(self, threshold):
        return sorted(sku for sku, i in self._items.items() if i.quantity < threshold)

    def __len__(self):
        return len(self._items)
PY
cat > /app/inventory/api.py <<'PY'
"""Framework-free request handler for the inventory service. See /app/SPEC.md."""

from .models import (
    ConflictError,
    InsufficientStockError,
    Inventory,
    Item,
    NotFoundError,
    ValidationError,
)

ITEM_FIELDS = {"sku", "name", "price_cents", "quantity"}
REQUIRED_FIELDS = {"sku", "name", "price_cents"}


def _error(status, message):
    return status, {"error": message}


class InventoryAPI:
    def __init__(self, inventory=None):
        self.inventory = Inventory() if inventory is None else inventory

    def handle(self, method, path, body=None):
        """Return a (status_code, json_dict) tuple."""
        try:
            return self._dispatch(method, path, body)
        except Exception as exc:  # never let bad input escape as an exception
            return _error(500, f"internal error: {exc}")

    def _dispatch(self, method, path, body):
        if not isinstance(path, str) or not path.startswith("/"):
            return _error(404, "not found")
        parts = path[1:].split("/")
        if any(p == "" for p in parts):
            return _error(404, f"no route for {path}")

        if parts == ["items"]:
            routes = {"GET": self._list_items, "POST": self._create_item}
            args = (body,)
        elif parts == ["stats"]:
            routes = {"GET": self._stats}
            args = ()
        elif len(parts) == 2 and parts[0] == "items":
            routes = {"GET": self._get_item, "DELETE": self._delete_item}
            args = (parts[1],)
        elif len(parts) == 3 and parts[0] == "items" and parts[2] == "adjust":
            routes = {"POST": self._adjust}
            args = (parts[1], body)
        else:
            return _error(404, f"no route for {path}")

        handler = routes.get(method)
        if handler is None:
            return _error(405, f"method {method} not allowed for {path}")
        return handler(*args)

    def _list_items(self, _body):
        return 200, {"items": [i.to_dict() for i in self.inventory.list()]}

    def _create_item(self, body):
        if not isinstance(body, dict):
            return _error(400, "body must be a JSON object")
        missing = REQUIRED_FIELDS - body.keys()
        if missing:
            return _error(400, f"missing fields: {', '.join(sorted(missing))}")
        unknown = set(body) - ITEM_FIELDS
        if unknown:
            return _error(400, f"unknown fields: {', '.join(sorted(map(str, unknown)))}")
        try:
            item = Item(**body)
        except ValidationError as exc:
            return _error(400, str(exc))
        try:
            self.inventory.add(item)
        except ConflictError as exc:
            return _error(409, str(exc))
        return 201, item.to_dict()

    def _get_item(self, sku):
        try:
            return 200, self.inventory.get(sku).to_dict()
        except NotFoundError as exc:
            return _error(404, str(exc))

    def _delete_item(self, sku):
        try:
            item = self.inventory.remove(sku)
        except NotFoundError as exc:
            return _error(404, str(exc))
        return 200, {"deleted": item.sku}

    def _adjust(self, sku, body):
        if not isinstance(body, dict):
            return _error(400, "body must be a JSON object")
        delta = body.get("delta")
        if "delta" not in body or not isinstance(delta, int) or isinstance(delta, bool):
            return _error(400, "delta must be an integer")
        try:
            self.inventory.adjust(sku, delta)
        except NotFoundError as exc:
            return _error(404, str(exc))
        except InsufficientStockError as exc:
            return _error(409, str(exc))
        except ValidationError as exc:
            return _error(400, str(exc))
        return 200, self.inventory.get(sku).to_dict()

    def _stats(self):
        items = self.inventory.list()
        return 200, {
            "item_count": len(items),
            "total_quantity": sum(i.quantity for i in items),
            "total_value_cents": self.inventory.total_value_cents(),
        }
PY
cat > /app/inventory/storage.py <<'PY'
"""JSON persistence for the inventory service. See /app/SPEC.md."""

import json
import os
import tempfile

from .models import ConflictError, Inventory, Item, ValidationError


def save(inventory, path):
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    data = {"items": [item.to_dict() for item in inventory.list()]}
    fd, tmp = tempfile.mkstemp(prefix=".inventory-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, sort_keys=True)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load(path):
    inventory = Inventory()
    try:
        with open(os.fspath(path), encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        return inventory
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValidationError(f"invalid inventory file: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise ValidationError('expected {"items": [...]}')
    for entry in data["items"]:
        if not isinstance(entry, dict) or set(entry) - {"sku", "name", "price_cents", "quantity"}:
            raise ValidationError(f"invalid item entry: {entry!r}")
        try:
            inventory.add(Item(**entry))
        except TypeError as exc:
            raise ValidationError(f"invalid item entry: {entry!r}") from exc
        except ConflictError as exc:
            raise ValidationError(str(exc)) from exc
    return inventory
PY
python3 - <<'PY'
import sys
sys.path.insert(0, "/app")
from inventory.api import InventoryAPI
api = InventoryAPI()
print(api.handle("POST", "/items", {"sku": "ABC123", "name": "Widget", "price_cents": 250, "quantity": 4}))
print(api.handle("GET", "/stats"))
PY
