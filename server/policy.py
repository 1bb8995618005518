"""Who may do what: every role boundary of the HTTP API and of the tables, in one place.

Roles: ``player`` (plays with his own wallet), ``croupier`` and ``chef`` (run the tables
they are assigned to), ``director`` (the Direzione Giochi: limits, Art. 15 suspensions and
closures, raises), ``inspector`` (oversight and Art. 16 credit), ``cashier`` (chips bought
and cashed out), ``admin`` (accounts and tables, never money or play).

Money: only a player stakes his own money; staff enter chips only for floor players at
live tables (``games.players``; the engines refuse anything else); only the cashier moves
chips in or out of a wallet, only the inspector grants credit. Every boundary here and in
the game kinds (``server/kinds/*``: who may send which game command) is a row of the role
x command matrix: ``tests/server/test_role_matrix_http_e2e.py`` (every route) and
``test_role_matrix_commands.py`` (every game command). The kinds check the role, the
assignment and what only the server does at an RNG table, before a command is queued; the
engines check whose chips a command moves (``games.players``), wherever it came from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler
from litestar.types import Guard

from games.commands import ROLES as GAME_ROLES
from games.commands import STAFF
from games.errors import GameError
from server.resources import resources_of

if TYPE_CHECKING:
    from server.auth import Principal
    from server.kinds.base import TableInfo

ROLES = ("player", "croupier", "chef", "inspector", "cashier", "director", "admin")

# ---- at the tables (the websocket's ``play``) ---------------------------------------------
# Who runs a table from the console (the engines' staff, ``games.commands``); croupiers and
# chefs only where they are assigned.
STAFF_ROLES: tuple[str, ...] = tuple(r for r in GAME_ROLES if r in STAFF)
# Who sends game commands at all; inspectors, cashiers and admins only watch.
TABLE_ROLES = ("player", *STAFF_ROLES)
ASSIGNED_ROLES = ("croupier", "chef")

# ---- HTTP ----------------------------------------------------------------------------------
CREATE_ACCOUNTS = ("director", "admin")  # an admin alone creates admins
SEE_ANY_WALLET = ("inspector", "cashier", "director", "admin")  # list, balance, statement
CASHIER = ("cashier",)  # deposit, cash out
CREDIT = ("inspector",)  # Art. 16
UNCLAIMED_REGISTER = ("cashier", "inspector", "director", "admin")  # Art. 19: the register; claims: CASHIER
COUNTERSIGN = ("inspector",)  # Art. 19 / Art. 37: the Controllore comunale's signature on a register item
OVERSIGHT = ("inspector", "director", "admin")  # ledger check, audit log, anyone's rounds and recalls
OPEN_TABLES = ("director", "admin")  # create tables, assign staff
DIRECTION = ("director",)  # Art. 15: authorise a chef, close and archive a table
LIMITS = ("chef", "director")  # the Direzione, and a chef at his own table
DESK = ("cashier", "inspector", "director")  # a self-exclusion asked for at the desk, and its lifting
VERIFY = ("cashier",)  # the age/ID check
RECALL = ("player", "croupier", "chef", *OVERSIGHT)  # a round's recall: players only theirs, staff their tables'


def require_roles(*roles: str) -> Guard:
    """A Litestar guard: the caller's role is one of ``roles``."""

    def guard(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
        if connection.user.role not in roles:
            raise GameError("forbidden", f"This needs one of the roles: {', '.join(roles)}.")

    return guard


def require_self_or(*roles: str) -> Guard:
    """A guard for ``/.../{user}/...`` routes and ``?user=``: the caller himself, or ``roles``."""

    def guard(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
        # Every user the request names, in its path and in each ``?user=``: a handler reads
        # one of them (the path's, or the last repeat), so none may be another player's.
        named = [connection.path_params["user"]] if "user" in connection.path_params else []
        named += connection.query_params.getall("user", [])
        if connection.user.role not in roles and any(u != connection.user.id for u in named):
            raise GameError("forbidden", "You may see only your own wallet and rounds.")

    return guard


def check_assigned(who: Principal, info: TableInfo) -> None:
    """Croupiers and chefs act only at the tables they are assigned to."""
    if who.role in ASSIGNED_ROLES and who.id not in info.staff:
        raise GameError("not_your_table", f"You are not assigned to table {info.id}.")


def require_assigned(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """A guard for ``/tables/{table_id}/...``: croupiers and chefs only at their own tables."""
    who = connection.user
    if who.role in ASSIGNED_ROLES:
        check_assigned(who, resources_of(connection.app).manager.known(connection.path_params["table_id"]))


async def require_own_round(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """A guard for ``/tables/{table_id}/rounds/{round_id}``: a player recalls only the rounds
    he played (an unknown table is still answered as such first)."""
    from server import store  # (here: the store imports the kinds, which import this module)

    who = connection.user
    if who.role != "player":
        return
    resources = resources_of(connection.app)
    table_id, round_id = connection.path_params["table_id"], connection.path_params["round_id"]
    resources.manager.known(table_id)
    async with resources.pool.acquire() as conn:
        if not await store.played_round(conn, who.id, table_id, round_id):
            raise GameError("forbidden", "You may recall only the rounds you played.")


def check_may_create(by: Principal, role: str) -> None:
    """Who creates which account (the route itself: ``CREATE_ACCOUNTS``): an admin alone creates admins."""
    if role not in ROLES:
        raise GameError("unknown_role", f"Roles are: {', '.join(ROLES)}.")
    if role == "admin" and by.role != "admin":
        raise GameError("forbidden", "Only an admin creates admins.")


def check_table_role(role: str) -> None:
    """Before a game command is even read: roles that never act at a table."""
    if role not in (*TABLE_ROLES, "system"):
        raise GameError("forbidden", f"A {role} watches the tables but does not play or run them.")
