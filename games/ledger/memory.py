"""The reference ledger: ``MemoryLedger`` obeys every rule of ``games.ledger.model`` in
memory, obviously right rather than fast. The PostgreSQL store is property-tested against
it (``tests/games/ledger/test_property.py``), TigerBeetle's reference-model idea."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from games.ledger.accounts import MAY_GO_NEGATIVE, Kind
from games.ledger.model import (
    Account,
    Balance,
    CreditGrant,
    Hold,
    Op,
    OpResult,
    Post,
    Problem,
    Transfer,
    _err,
    account_info,
    check_funds,
    check_pair,
    hold_not_pending,
    post_exceeds_hold,
    replay,
    replay_grant,
    result_of,
    unknown_account,
    unknown_hold,
    validate,
    validate_grant,
)

__all__ = ["MemoryLedger"]


class MemoryLedger:
    """The reference: obviously right rather than fast. Balances are recomputed from the
    full list of results every time; a failed batch restores the list it copied."""

    def __init__(self) -> None:
        self.accounts: dict[str, Account] = {}
        self.credit: dict[str, int] = {}
        self.log: list[OpResult] = []
        self.grants: dict[str, CreditGrant] = {}

    def open_account(self, account: str, currency: str | None = None, kind: str | None = None) -> Account:
        info = account_info(account, currency, kind)
        old = self.accounts.get(account)
        if old is not None and old != info:
            raise _err("account_conflict", f"{account} exists with other settings.", account=account)
        self.accounts[account] = info
        self.credit.setdefault(account, 0)
        return info

    def _find(self, op_id: str) -> OpResult | None:
        return next((r for r in self.log if r.id == op_id), None)

    def _totals(self, account: str) -> tuple[int, int, int, int]:
        """debits_posted, credits_posted, debits_pending, credits_pending."""
        settled = {r.hold for r in self.log if r.hold}
        dp = cp = dpe = cpe = 0
        for r in self.log:
            if r.op in ("transfer", "post"):
                dp += r.amount if r.debit == account else 0
                cp += r.amount if r.credit == account else 0
            elif r.op == "hold" and r.id not in settled:
                dpe += r.amount if r.debit == account else 0
                cpe += r.amount if r.credit == account else 0
        return dp, cp, dpe, cpe

    def _account(self, account: str, op_id: str) -> Account:
        info = self.accounts.get(account)
        if info is None:
            raise unknown_account(op_id, account)
        return info

    def _one(self, op: Op) -> OpResult:
        validate(op)
        stored = self._find(op.id)
        if stored is not None:
            return replay(op, stored, self._find(stored.hold) if stored.hold else None)
        if isinstance(op, (Transfer, Hold)):
            debit, credit = self._account(op.debit, op.id), self._account(op.credit, op.id)
            check_pair(op.id, debit, credit)
            dp, cp, dpe, _ = self._totals(debit.id)
            check_funds(op.id, debit, dp + dpe, cp, self.credit[debit.id], op.amount)
            result = result_of(op, debit.currency)
        else:
            hold = self._find(op.hold)
            if hold is None or hold.op != "hold":
                raise unknown_hold(op.id, op.hold)
            if any(r.hold == hold.id for r in self.log):
                raise hold_not_pending(op.id, hold.id)
            if isinstance(op, Post) and op.amount is not None and op.amount > hold.amount:
                raise post_exceeds_hold(op.id, hold.id, op.amount, hold.amount)
            result = result_of(op, hold.currency, hold)
        self.log.append(result)
        return result

    def apply(self, ops: Iterable[Op]) -> list[OpResult]:
        """Malformed operations are refused before anything is looked up, then each
        operation is applied in order; the first refusal undoes the batch."""
        ops = list(ops)
        for op in ops:
            validate(op)
        saved = list(self.log)
        try:
            return [self._one(op) for op in ops]
        except BaseException:
            self.log = saved
            raise

    def balance(self, account: str) -> Balance:
        info = self._account(account, "")
        dp, cp, dpe, _ = self._totals(account)
        limit = self.credit[account]
        return Balance(account, info.currency, cp - dp, dpe, cp - dp - dpe + limit, limit)

    def grant_credit(self, account: str, limit: int, approved_by: str, id: str) -> CreditGrant:
        grant = validate_grant(account, limit, approved_by, id)
        old = self.grants.get(id)
        if old is not None:
            return replay_grant(grant, old)
        info = self._account(account, id)
        if info.kind != Kind.WALLET:
            raise _err("credit_not_allowed", "Only a player's wallet can be given credit.", account=account)
        dp, cp, dpe, _ = self._totals(account)
        if dp + dpe > cp + limit:
            raise _err("credit_in_use", "More credit is in use than the new limit.", account=account)
        self.credit[account] = limit
        self.grants[id] = grant
        return grant

    def check(self, open_refs: Callable[[], Iterable[str]] | Iterable[str] | None = None) -> list[Problem]:
        problems = []
        sums: dict[str, int] = {}
        for acc, info in sorted(self.accounts.items()):
            dp, cp, dpe, cpe = self._totals(acc)
            sums[info.currency] = sums.get(info.currency, 0) + cp - dp + cpe - dpe
            if info.kind not in MAY_GO_NEGATIVE and dp + dpe > cp + self.credit[acc]:
                problems.append(Problem("overdrawn", acc, "debits exceed credits and credit line"))
        for cur, total in sorted(sums.items()):
            if total:
                problems.append(Problem("currency_not_zero", cur, f"accounts sum to {total}"))
        if open_refs is not None:
            refs = set(open_refs() if callable(open_refs) else open_refs)
            settled = {r.hold for r in self.log if r.hold}
            for r in self.log:
                if r.op == "hold" and r.id not in settled and r.ref not in refs:
                    detail = f"pending on {r.debit}, round {r.ref!r} is not open"
                    problems.append(Problem("hold_round_closed", r.id, detail))
        return problems
