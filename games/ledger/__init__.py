"""The shared chip ledger: double-entry accounts and immutable transfers on PostgreSQL,
holds for bets, credit lines, the cashier. See ``model`` for the rules,
``memory`` for the in-memory reference, ``store`` for the PostgreSQL side, ``accounts`` for account ids."""

from games.ledger import accounts
from games.ledger.check import CheckReport
from games.ledger.memory import MemoryLedger
from games.ledger.model import (
    Account,
    Balance,
    CreditGrant,
    Hold,
    LedgerError,
    Op,
    OpResult,
    Post,
    Problem,
    Receipt,
    StatementLine,
    Transfer,
    Void,
)
from games.ledger.store import Ledger

__all__ = [
    "accounts", "Account", "Balance", "CheckReport", "CreditGrant", "Hold", "Ledger", "LedgerError",
    "MemoryLedger", "Op", "OpResult", "Post", "Problem", "Receipt", "StatementLine", "Transfer", "Void",
]
