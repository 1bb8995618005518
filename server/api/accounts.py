"""``/me`` and ``/accounts``: who I am, creating and listing accounts, a wallet's balance
and history (your own, or staff's: ``server.policy``)."""

from __future__ import annotations

from litestar import Controller, get, post
from litestar.params import Parameter

from games.ledger import Balance, StatementLine
from server.accounts import AccountService
from server.api.schemas import AccountSummary, NewAccount
from server.auth import Principal
from server.policy import CREATE_ACCOUNTS, SEE_ANY_WALLET, require_roles, require_self_or


class AccountsController(Controller):
    path = "/"
    tags = ["accounts"]

    @get("/me", operation_id="GetMe", summary="Who I am and my balance")
    async def me(self, caller: Principal, account_service: AccountService) -> AccountSummary:
        return AccountSummary(caller.id, caller.role, caller.currency, await account_service.own_balance(caller))

    @post("/accounts", operation_id="CreateAccount", guards=[require_roles(*CREATE_ACCOUNTS)],
          summary="Create an account of any role")
    async def create_account(self, caller: Principal, data: NewAccount,
                             account_service: AccountService) -> AccountSummary:
        who = await account_service.create(caller, data.user, data.password, data.role, data.currency)
        return AccountSummary(who.id, who.role, who.currency)

    @get("/accounts", operation_id="ListAccounts", guards=[require_roles(*SEE_ANY_WALLET)], summary="All accounts")
    async def list_accounts(self, account_service: AccountService) -> list[Principal]:
        return await account_service.all()

    @get("/accounts/{user:str}/balance", operation_id="GetBalance", guards=[require_self_or(*SEE_ANY_WALLET)],
         summary="A wallet's balance (your own, or staff)")
    async def balance(self, user: str, account_service: AccountService) -> Balance:
        return await account_service.balance(user)

    @get("/accounts/{user:str}/statement", operation_id="GetStatement", guards=[require_self_or(*SEE_ANY_WALLET)],
         summary="A wallet's history (your own, or staff)")
    async def statement(self, user: str, account_service: AccountService,
                        limit: int = Parameter(default=100, ge=1, le=1000)) -> list[StatementLine]:
        return await account_service.statement(user, limit)
