"""The web pages: players, croupiers and the pit, served by the server itself from
``server/web/`` (plain HTML, CSS and ES modules: no build step).

The pages speak the same REST API and websocket protocol as every other client; their
only private part is how they hold the login: ``POST /auth/session`` puts the token in an
HttpOnly, SameSite=Strict cookie (``server.auth.SESSION_COOKIE``) that no script can read.
Every page goes out with a Content-Security-Policy that runs only this origin's own scripts
and lets nothing frame it.
"""

from __future__ import annotations

from pathlib import Path

from litestar import Response, get
from litestar.response import Redirect
from litestar.static_files import create_static_files_router

WEB_DIR = Path(__file__).parent / "web"

# Scripts, styles and connections of this origin only (the websocket included: 'self'
# covers ws: and wss: of the same host in the browsers we test); no inline script, no
# frames of us elsewhere (clickjacking), no referrer with a table id to another site.
SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


async def _secure(response: Response) -> Response:
    response.headers.update(SECURITY_HEADERS)
    # Revalidated every time (the ETag makes that cheap): a deploy's new scripts are used at once.
    response.headers["Cache-Control"] = "no-cache"
    return response


async def no_store(response: Response) -> Response:
    """The API's answers (balances, statements, views) are never kept by a browser or a
    proxy: a shared terminal's back button or cache shows nobody's money. (The pages'
    files have their own rule, ``_secure``: Litestar uses the nearest layer's hook.)"""
    response.headers.setdefault("Cache-Control", "no-store")
    return response


@get("/", include_in_schema=False)
async def home() -> Redirect:
    """``/`` is the player's lobby."""
    return Redirect("/app/")


pages_router = create_static_files_router(path="/app", directories=[WEB_DIR], html_mode=True, name="pages",
                                          after_request=_secure)
PAGE_ROUTES = [home, pages_router]
