"""A tiny in-memory ledger."""

from ledger.account import Account, Ledger
from ledger.errors import InsufficientFunds, LedgerError, UnknownAccount

__all__ = ["Account", "Ledger", "InsufficientFunds", "LedgerError", "UnknownAccount"]
