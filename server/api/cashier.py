"""``/cashier`` and ``/credit``: chips in and out of a player's wallet, and credit lines."""

from __future__ import annotations

from litestar import Controller, post

from games.ledger import CreditGrant, Receipt
from server.api.schemas import CashierOrder, CreditLineOrder
from server.auth import Principal
from server.cashier import Cashier
from server.policy import CASHIER, CREDIT, require_roles


class CashierController(Controller):
    path = "/"
    tags = ["cashier"]

    @post("/cashier/deposit", operation_id="Deposit", status_code=200, guards=[require_roles(*CASHIER)],
          summary="Chips bought at the cashier")
    async def deposit(self, caller: Principal, data: CashierOrder, cashier: Cashier) -> Receipt:
        return await cashier.deposit(caller, data.user, data.amount, data.id, data.currency)

    @post("/cashier/cash-out", operation_id="CashOut", status_code=200, guards=[require_roles(*CASHIER)],
          summary="Chips cashed out at the cashier")
    async def cash_out(self, caller: Principal, data: CashierOrder, cashier: Cashier) -> Receipt:
        return await cashier.cash_out(caller, data.user, data.amount, data.id, data.currency)

    @post("/credit", operation_id="GrantCredit", status_code=200, guards=[require_roles(*CREDIT)],
          summary="Grant a credit line (Art. 16: inspector's approval)")
    async def credit(self, caller: Principal, data: CreditLineOrder, cashier: Cashier) -> CreditGrant:
        return await cashier.grant_credit(caller, data.user, data.limit, data.id, data.currency)
