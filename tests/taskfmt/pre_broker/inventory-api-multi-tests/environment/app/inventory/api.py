"""Framework-free request handler for the inventory service. See /app/SPEC.md."""


class InventoryAPI:
    def __init__(self, inventory=None):
        raise NotImplementedError

    def handle(self, method, path, body=None):
        """Return a (status_code, json_dict) tuple."""
        raise NotImplementedError
