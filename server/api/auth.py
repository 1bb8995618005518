"""``/auth``: logging in and a player opening his own account; both answer with a token."""

from __future__ import annotations

from litestar import Controller, Request, post

from server.accounts import AccountService
from server.api.schemas import IssuedToken, Login, Registration
from server.auth import Principal, Tokens


def _issued(tokens: Tokens, who: Principal) -> IssuedToken:
    token, expires = tokens.issue(who)
    return IssuedToken(token, expires.isoformat(), who.id, who.role)


class AuthController(Controller):
    path = "/auth"
    tags = ["auth"]

    @post("/login", operation_id="Login", status_code=200, summary="Log in: a bearer token for HTTP and the websocket",
          description="Failed logins are throttled per user name and per client address: 429 "
                      "`too_many_attempts`, then `account_locked`, each with Retry-After (seconds).")
    async def login(self, request: Request, data: Login, account_service: AccountService,
                    tokens: Tokens) -> IssuedToken:
        address = request.client.host if request.client else ""
        return _issued(tokens, await account_service.authenticate(data.user, data.password, address))

    @post("/register", operation_id="Register", status_code=201,
          summary="Open a player account (wallet in the given currency)")
    async def register(self, data: Registration, account_service: AccountService, tokens: Tokens) -> IssuedToken:
        return _issued(tokens, await account_service.register(data.user, data.password, data.currency))
