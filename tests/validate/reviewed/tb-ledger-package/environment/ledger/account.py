from ledger.errors import InsufficientFunds, UnknownAccount


def _amount(value):
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"amount must be a positive integer, not {value!r}")
    return value


class Account:
    def __init__(self, name, balance=0):
        self.name = name
        self.balance = balance

    def deposit(self, amount):
        self.balance += _amount(amount)
        return self.balance

    def withdraw(self, amount):
        self.balance -= _amount(amount)
        return self.balance


class Ledger:
    def __init__(self):
        self._accounts = {}
        self._history = []

    def __len__(self):
        return len(self._accounts)

    def open(self, name, balance=0):
        account = Account(name, balance)
        self._accounts[name] = account
        return account

    def account(self, name):
        try:
            return self._accounts[name]
        except KeyError:
            raise UnknownAccount(name) from None

    def transfer(self, source, target, amount):
        receiver = self.account(target)
        receiver.deposit(amount)
        sender = self.account(source)
        if sender.balance < amount:
            raise InsufficientFunds(f"{source} has {sender.balance}, needs {amount}")
        sender.withdraw(amount)
        self._history.append((source, target, amount))

    def balances(self):
        return {name: account.balance for name, account in sorted(self._accounts.items())}

    def history(self):
        return list(self._history)
