import sys

import pytest

sys.path.insert(0, "/app")

from ledger import Account, Ledger  # noqa: E402
from ledger.errors import InsufficientFunds, LedgerError, UnknownAccount  # noqa: E402


def test_deposit_and_balance():
    account = Account("alice")
    account.deposit(50)
    assert account.deposit(25) == 75
    assert account.balance == 75
    assert account.name == "alice"


def test_withdraw_within_balance():
    account = Account("bob", 30)
    assert account.withdraw(30) == 0


def test_withdraw_more_than_balance_raises_and_keeps_balance():
    account = Account("bob", 10)
    with pytest.raises(InsufficientFunds):
        account.withdraw(11)
    assert account.balance == 10


def test_insufficient_funds_is_a_ledger_error():
    with pytest.raises(LedgerError):
        Account("carol").withdraw(1)


@pytest.mark.parametrize("amount", [0, -5, 2.5, "10", True, None])
def test_invalid_amounts(amount):
    account = Account("dave", 5)
    with pytest.raises(ValueError):
        account.deposit(amount)
    with pytest.raises(ValueError):
        account.withdraw(amount)
    assert account.balance == 5


def test_transfer_moves_money():
    ledger = Ledger()
    ledger.open("a", 100)
    ledger.open("b")
    ledger.transfer("a", "b", 40)
    assert ledger.balances() == {"a": 60, "b": 40}
    assert ledger.history() == [("a", "b", 40)]


def test_failed_transfer_changes_nothing():
    ledger = Ledger()
    ledger.open("a", 10)
    ledger.open("b", 5)
    with pytest.raises(InsufficientFunds):
        ledger.transfer("a", "b", 11)
    assert ledger.balances() == {"a": 10, "b": 5}
    assert ledger.history() == []


def test_transfer_to_unknown_account_changes_nothing():
    ledger = Ledger()
    ledger.open("a", 10)
    with pytest.raises(UnknownAccount):
        ledger.transfer("a", "nobody", 5)
    with pytest.raises(KeyError):
        ledger.account("nobody")
    assert ledger.balances() == {"a": 10}


def test_accounts_are_the_ledgers_own():
    ledger = Ledger()
    opened = ledger.open("a", 1)
    assert isinstance(opened, Account)
    assert isinstance(ledger.account("a"), Account)
    assert len(ledger) == 1
    ledger.account("a").deposit(4)
    assert opened.balance == 5


def test_history_in_order():
    ledger = Ledger()
    ledger.open("a", 50)
    ledger.open("b", 50)
    ledger.transfer("a", "b", 40)
    ledger.transfer("b", "a", 15)
    assert ledger.history() == [("a", "b", 40), ("b", "a", 15)]
    assert ledger.balances() == {"a": 25, "b": 75}
