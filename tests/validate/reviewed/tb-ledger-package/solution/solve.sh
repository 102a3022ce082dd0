#!/bin/bash
set -euo pipefail
cd /app/ledger
python3 - <<'PY'
from pathlib import Path

path = Path("account.py")
text = path.read_text()
text = text.replace(
    "    def withdraw(self, amount):\n        self.balance -= _amount(amount)\n",
    "    def withdraw(self, amount):\n        amount = _amount(amount)\n        if amount > self.balance:\n"
    "            raise InsufficientFunds(f\"{self.name} has {self.balance}, needs {amount}\")\n"
    "        self.balance -= amount\n",
)
text = text.replace(
    "        receiver = self.account(target)\n        receiver.deposit(amount)\n        sender = self.account(source)\n"
    "        if sender.balance < amount:\n            raise InsufficientFunds(f\"{source} has {sender.balance}, needs {amount}\")\n"
    "        sender.withdraw(amount)\n",
    "        sender, receiver = self.account(source), self.account(target)\n        sender.withdraw(amount)\n"
    "        receiver.deposit(amount)\n",
)
path.write_text(text)
PY
