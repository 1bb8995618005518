"""The ledger's model, pure: operations, results, error codes, the rules every operation
obeys (the in-memory reference ledger that follows them is ``games.ledger.memory``).

Double entry in the TigerBeetle manner: every operation debits one account and credits
another of the same currency. A ``Transfer`` moves chips at once. A ``Hold`` reserves
them (pending): the amount counts against the debit account's balance at once. A ``Post``
settles a hold, in full or in part (the rest goes back), a ``Void`` gives it all back.
Nothing is ever edited: mistakes are corrected by new operations. Ids are chosen by the
client; the same id with the same content again returns the original result, with other
content it is ``id_conflict``.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import msgspec

from games.errors import GameError
from games.ledger.accounts import MAY_GO_NEGATIVE, POINTS_CURRENCY, Kind, parse, tournament_of
from games.money import MAX_AMOUNT

__all__ = [
    "Kind", "LedgerError", "Transfer", "Hold", "Post", "Void", "Op", "OpResult", "Account",
    "Balance", "Problem", "Receipt", "CreditGrant", "StatementLine",
    "validate", "account_info", "check_pair", "check_funds", "result_of", "replay",
]


class LedgerError(GameError):
    """A refused ledger operation. Nothing was written. Codes:

    invalid_op, invalid_id, invalid_amount, invalid_code, invalid_ref, same_account,
    invalid_account, unknown_currency, unknown_account, account_conflict, currency_mismatch,
    points_not_transferable, insufficient_funds, unknown_hold, hold_not_pending,
    post_exceeds_hold, id_conflict, credit_not_allowed, credit_in_use, approval_required,
    ledger_busy (a race kept losing: nothing written, ask again).
    """


# ---------------------------------------------------------------- operations


class Transfer(msgspec.Struct, frozen=True, tag="transfer"):
    id: str
    debit: str
    credit: str
    amount: int
    code: str
    ref: str = ""


class Hold(msgspec.Struct, frozen=True, tag="hold"):
    id: str
    debit: str
    credit: str
    amount: int
    code: str
    ref: str = ""


class Post(msgspec.Struct, frozen=True, tag="post"):
    """Settle ``hold``: ``amount`` (None = all of it) moves, the rest is released.
    ``code`` and ``ref`` left empty take the hold's."""

    id: str
    hold: str
    amount: int | None = None
    code: str = ""
    ref: str = ""


class Void(msgspec.Struct, frozen=True, tag="void"):
    """Release all of ``hold`` (push, refund, voided round). ``ref`` empty takes the hold's."""

    id: str
    hold: str
    code: str
    ref: str = ""


Op = Transfer | Hold | Post | Void


class OpResult(msgspec.Struct, frozen=True):
    id: str
    op: str  # "transfer" | "hold" | "post" | "void"
    debit: str
    credit: str
    currency: str
    amount: int  # moved (posted) from debit to credit; a hold's reserved amount; 0 for a void
    code: str
    ref: str
    hold: str = ""  # the hold a post/void settles
    released: int = 0  # what a post/void gave back to the debit account


class Account(msgspec.Struct, frozen=True):
    id: str
    currency: str
    kind: str


class Balance(msgspec.Struct, frozen=True):
    account: str
    currency: str
    posted: int  # credits posted - debits posted
    pending: int  # reserved by holds on this account, not yet settled
    available: int  # posted - pending + credit_limit: what a new hold may still take
    credit_limit: int


class Problem(msgspec.Struct, frozen=True):
    code: str  # currency_not_zero | balance_mismatch | overdrawn | hold_round_closed
    subject: str  # the account, currency or hold concerned
    detail: str


class Receipt(msgspec.Struct, frozen=True):
    """What the cashier hands over: kept by the client, reproducible by its id."""

    id: str
    kind: str  # "deposit" | "cash_out"
    account: str
    currency: str
    amount: int
    balance_after: int
    at: datetime

    def text(self) -> str:
        from games.money import currency

        cur = currency(self.currency)
        verb = "Chips bought" if self.kind == "deposit" else "Chips cashed out"
        return (
            f"{verb}: {cur.format(self.amount)} | account {self.account} | "
            f"balance {cur.format(self.balance_after)} | receipt {self.id} | {self.at.isoformat()}"
        )


class CreditGrant(msgspec.Struct, frozen=True):
    id: str
    account: str
    limit: int
    approved_by: str
    at: datetime | None = None


class StatementLine(msgspec.Struct, frozen=True):
    seq: int
    at: datetime
    id: str
    op: str
    code: str
    ref: str
    counterparty: str
    change: int  # effect on the posted balance of this account
    pending_change: int  # effect on what is reserved on this account
    balance: int  # posted balance after the line
    pending: int  # reserved after the line


# ---------------------------------------------------------------- rules

_CODE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
MAX_ID = 200
MAX_REF = 200


def _err(code: str, message: str, **details: Any) -> LedgerError:
    return LedgerError(code, message, **details)


def _positive(amount: object, op_id: str) -> None:
    if type(amount) is not int or amount <= 0 or amount > MAX_AMOUNT:
        raise _err("invalid_amount", f"Amount {amount!r} must be a positive whole number of minor units.", op=op_id)


def validate(op: object) -> None:
    """What can be said of an operation without looking at the ledger."""
    if not isinstance(op, (Transfer, Hold, Post, Void)):
        raise _err("invalid_op", f"{op!r} is not a ledger operation.")
    if not isinstance(op.id, str) or not op.id or len(op.id) > MAX_ID or "\x00" in op.id:
        raise _err("invalid_id", f"Operation id {op.id!r} must be a non-empty string of at most {MAX_ID}.")
    if isinstance(op, (Transfer, Hold)) or (isinstance(op, Post) and op.amount is not None):
        _positive(op.amount, op.id)
    empty_ok = isinstance(op, Post)
    if not isinstance(op.code, str) or not (_CODE.fullmatch(op.code) or (empty_ok and op.code == "")):
        raise _err("invalid_code", f"Code {op.code!r} must be snake_case, at most 40 characters.", op=op.id)
    if not isinstance(op.ref, str) or len(op.ref) > MAX_REF or "\x00" in op.ref:
        raise _err("invalid_ref", f"Reference {op.ref!r} must be a string of at most {MAX_REF}.", op=op.id)
    if isinstance(op, (Transfer, Hold)):
        if not isinstance(op.debit, str) or not isinstance(op.credit, str) or "\x00" in op.debit + op.credit:
            raise _err("unknown_account", "Accounts are named by their id strings.", op=op.id)
        if op.debit == op.credit:
            raise _err("same_account", f"{op.debit} cannot pay itself.", op=op.id, account=op.debit)
    elif not isinstance(op.hold, str) or not op.hold or "\x00" in op.hold:
        raise _err("unknown_hold", f"Hold {op.hold!r} does not exist.", op=op.id)


def account_info(account: str, currency: str | None = None, kind: str | None = None) -> Account:
    """Validate an account id against the currency and kind it is opened with."""
    try:
        k, cur = parse(account)
    except LedgerError:
        raise
    except GameError as e:
        raise _err(e.code, e.message, account=account) from None
    if currency is not None and currency != cur:
        raise _err("currency_mismatch", f"{account} holds {cur}, not {currency}.", account=account)
    if kind is not None and kind != k:
        raise _err("invalid_account", f"{account} is a {k} account, not {kind}.", account=account)
    return Account(account, cur, str(k))


def check_pair(op_id: str, debit: Account, credit: Account) -> None:
    """Same currency; points only between a tournament's player and that tournament's pool."""
    pts_d, pts_c = debit.currency == POINTS_CURRENCY, credit.currency == POINTS_CURRENCY
    if pts_d or pts_c:
        if not (pts_d and pts_c):
            raise _err(
                "points_not_transferable",
                "Tournament points have no cash value and never move to or from chips.",
                op=op_id, debit=debit.id, credit=credit.id,
            )
        if debit.kind == Kind.POINTS and credit.kind == Kind.POINTS:
            raise _err("points_not_transferable", "Tournament points cannot be passed to another player.",
                       op=op_id, debit=debit.id, credit=credit.id)
        if tournament_of(debit.id) != tournament_of(credit.id):
            raise _err("points_not_transferable", "Tournament points stay in their own tournament.",
                       op=op_id, debit=debit.id, credit=credit.id)
    elif debit.currency != credit.currency:
        raise _err("currency_mismatch", f"{debit.id} and {credit.id} hold different currencies.",
                   op=op_id, debit=debit.id, credit=credit.id)


def check_funds(op_id: str, account: Account, debits: int, credits: int, credit_limit: int, amount: int) -> None:
    """``debits`` = posted + pending debits, ``credits`` = posted credits, before this op."""
    if account.kind in MAY_GO_NEGATIVE:
        return
    if debits + amount > credits + credit_limit:
        raise insufficient_funds(op_id, account.id, credits + credit_limit - debits, amount)


# The refusals both ledgers raise, worded once.

def insufficient_funds(op_id: str, account: str, available: int, amount: int) -> LedgerError:
    return _err("insufficient_funds", "Not enough chips in the account for this amount.",
                op=op_id, account=account, available=available, amount=amount)


def unknown_account(op_id: str, account: str) -> LedgerError:
    return _err("unknown_account", f"No account {account!r}.", op=op_id, account=account)


def unknown_hold(op_id: str, hold: str) -> LedgerError:
    return _err("unknown_hold", f"Hold {hold!r} does not exist.", op=op_id, hold=hold)


def hold_not_pending(op_id: str, hold: str) -> LedgerError:
    return _err("hold_not_pending", f"Hold {hold!r} was already settled.", op=op_id, hold=hold)


def post_exceeds_hold(op_id: str, hold: str, amount: int, held: int) -> LedgerError:
    return _err("post_exceeds_hold", f"Cannot post {amount} of a hold of {held}.", op=op_id, hold=hold)


def id_conflict(op_id: str) -> LedgerError:
    return _err("id_conflict", f"Id {op_id!r} was already used for a different operation.", op=op_id)


def result_of(op: Op, currency: str, hold: OpResult | None = None) -> OpResult:
    """The result ``op`` produces (``hold`` = the hold a post/void settles)."""
    if isinstance(op, (Transfer, Hold)):
        kind = "transfer" if isinstance(op, Transfer) else "hold"
        return OpResult(op.id, kind, op.debit, op.credit, currency, op.amount, op.code, op.ref)
    assert hold is not None
    ref = op.ref or hold.ref
    if isinstance(op, Post):
        amount = hold.amount if op.amount is None else op.amount
        return OpResult(op.id, "post", hold.debit, hold.credit, hold.currency, amount, op.code or hold.code,
                        ref, hold.id, hold.amount - amount)
    return OpResult(op.id, "void", hold.debit, hold.credit, hold.currency, 0, op.code, ref, hold.id, hold.amount)


def replay(op: Op, stored: OpResult, hold: OpResult | None) -> OpResult:
    """An id seen before: the original result if ``op`` says the same, else ``id_conflict``."""
    same = False
    if isinstance(op, (Transfer, Hold)):
        same = result_of(op, stored.currency) == stored
    elif stored.op == ("post" if isinstance(op, Post) else "void") and op.hold == stored.hold and hold is not None:
        same = result_of(op, stored.currency, hold) == stored
    if not same:
        raise id_conflict(op.id)
    return stored


def validate_grant(account: str, limit: int, approved_by: str, id: str) -> CreditGrant:
    if not isinstance(id, str) or not id or len(id) > MAX_ID or "\x00" in id:
        raise _err("invalid_id", f"Grant id {id!r} must be a non-empty string.")
    if type(limit) is not int or limit < 0 or limit > MAX_AMOUNT:
        raise _err("invalid_amount", f"Credit limit {limit!r} must be a whole number >= 0.")
    if not isinstance(approved_by, str) or not approved_by.strip() or "\x00" in approved_by:
        raise _err("approval_required", "A credit line needs the approving inspector (Art. 16).")
    if not isinstance(account, str):
        raise _err("unknown_account", f"No account {account!r}.")
    return CreditGrant(id, account, limit, approved_by)


def replay_grant(grant: CreditGrant, old: CreditGrant) -> CreditGrant:
    if (old.account, old.limit, old.approved_by) != (grant.account, grant.limit, grant.approved_by):
        raise _err("id_conflict", f"Id {grant.id!r} was already used for a different grant.")
    return old

