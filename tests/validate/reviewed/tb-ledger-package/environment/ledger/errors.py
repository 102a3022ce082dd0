class LedgerError(Exception):
    """Anything the ledger refuses."""


class InsufficientFunds(LedgerError):
    """A withdrawal or transfer larger than the balance."""


class UnknownAccount(LedgerError, KeyError):
    """No account of that name."""
