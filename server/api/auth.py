"""``/auth``: logging in and a player opening his own account; both answer with a token.
``/auth/session``: the same login for the web pages, whose token lives in an HttpOnly cookie.
Logging out (``/auth/logout``, ``DELETE /auth/session``) revokes the token (``server.sessions``)."""

from __future__ import annotations

from litestar import Controller, Request, Response, delete, post
from litestar.datastructures import Cookie

from games.errors import GameError
from server.accounts import AccountService
from server.api.schemas import IssuedToken, Login, Registration, Session
from server.auth import SESSION_COOKIE, Principal, Tokens, same_origin
from server.resources import Resources
from server.sessions import log_out


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

    @post("/session", operation_id="OpenSession", status_code=200, opt={"exclude_from_auth": True},
          summary="Log in from a web page: the token goes into an HttpOnly, SameSite=Strict cookie",
          description="For browsers (the pages under /app). The answer names the user, never the token: no "
                      "script can read it. Sent from another origin it is refused (403 `forbidden`). The "
                      "same throttle as /auth/login.")
    async def open_session(self, request: Request, data: Login, account_service: AccountService,
                           tokens: Tokens) -> Response[Session]:
        if not same_origin(request.headers):
            raise GameError("forbidden", "Log in from this casino's own pages.")
        address = request.client.host if request.client else ""
        who = await account_service.authenticate(data.user, data.password, address)
        token, expires = tokens.issue(who)
        secure = request.url.scheme == "https" or request.headers.get("x-forwarded-proto") == "https"
        cookie = Cookie(key=SESSION_COOKIE, value=token, path="/", httponly=True, samesite="strict",
                        secure=secure, max_age=tokens.minutes * 60)
        return Response(Session(who.id, who.role, expires.isoformat()), cookies=[cookie])

    @post("/logout", operation_id="Logout", status_code=204, summary="Log out: the presented token stops working",
          description="Revokes the token this request came with, on every process: any later request or "
                      "websocket handshake with it is 401 `unauthorized` (a second logout too), and the "
                      "websockets open with it close (4012). The user's other tokens (other devices) keep "
                      "working.")
    async def logout(self, request: Request, resources: Resources) -> None:
        await log_out(resources, request.auth)

    @delete("/session", operation_id="CloseSession", status_code=204, summary="Log out of the web pages",
            description="Revokes the session's token on the server (as /auth/logout: a copy of it, or a "
                        "websocket open with it, stops working) and clears the cookie. The caller must be "
                        "logged in: 401 otherwise, when the cookie is useless anyway.",
            response_cookies=[Cookie(key=SESSION_COOKIE, value="", path="/", httponly=True, samesite="strict",
                                     max_age=0)])
    async def close_session(self, request: Request, resources: Resources) -> None:
        await log_out(resources, request.auth)
