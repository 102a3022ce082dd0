"""JSON persistence for the inventory service. See /app/SPEC.md."""


def save(inventory, path):
    raise NotImplementedError


def load(path):
    raise NotImplementedError
