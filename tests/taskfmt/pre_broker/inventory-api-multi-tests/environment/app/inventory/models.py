"""Domain model for the inventory service. See /app/SPEC.md."""

from dataclasses import dataclass


class ValidationError(Exception):
    """Invalid field values."""


class NotFoundError(Exception):
    """Unknown SKU."""


class ConflictError(Exception):
    """SKU already exists."""


class InsufficientStockError(Exception):
    """A stock adjustment would make the quantity negative."""


@dataclass
class Item:
    sku: str
    name: str
    price_cents: int
    quantity: int = 0

    def __post_init__(self):
        raise NotImplementedError

    def to_dict(self):
        raise NotImplementedError


class Inventory:
    def __init__(self):
        raise NotImplementedError

    def add(self, item):
        raise NotImplementedError

    def get(self, sku):
        raise NotImplementedError

    def remove(self, sku):
        raise NotImplementedError

    def adjust(self, sku, delta):
        raise NotImplementedError

    def list(self):
        raise NotImplementedError

    def total_value_cents(self):
        raise NotImplementedError

    def low_stock(self, threshold):
        raise NotImplementedError
