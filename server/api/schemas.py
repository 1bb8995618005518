"""What the HTTP API reads and writes that is not already a ledger or store type: the
request bodies (``forbid_unknown_fields``: a misspelt field is refused, not dropped) and
the responses built here. Responses straight from the ledger (``Balance``, ``Receipt``,
...) or the store (``RoundStep``, ...) keep their own types."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from games.ledger import Balance
from games.validation import Amount, NonNegative, Text
from server.kinds.base import Authorisation
from server.store.limits import LimitsVersion

# ---- auth ------------------------------------------------------------------------------


class Login(msgspec.Struct, forbid_unknown_fields=True):
    user: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
    password: Annotated[str, msgspec.Meta(max_length=1024)]


class Registration(msgspec.Struct, forbid_unknown_fields=True):
    """A player opening his own account."""

    user: str
    password: str
    currency: str = "CHF"


class Session(msgspec.Struct):
    """A page's session: who is logged in and until when; the token itself is only in the
    HttpOnly cookie, never in a body a script could read."""

    user: str
    role: str
    expires_at: str


class IssuedToken(msgspec.Struct):
    """A bearer token for HTTP and the websocket, and until when it is valid."""

    token: str
    expires_at: str
    user: str
    role: str


# ---- accounts and the cashier ----------------------------------------------------------


class NewAccount(msgspec.Struct, forbid_unknown_fields=True):
    user: str
    password: str
    role: str
    currency: str = "CHF"


class AccountSummary(msgspec.Struct):
    """An account; ``balance``: a player's wallet when he asks about himself, else null."""

    id: str
    role: str
    currency: str
    balance: Balance | None = None


class CashierOrder(msgspec.Struct, forbid_unknown_fields=True):
    """Chips bought or cashed out at the cashier."""

    user: str
    amount: Amount  # minor units (CHF 5.00 == 500)
    id: str = ""  # the receipt id: a retry with the same id is not paid twice
    currency: str = ""


class CreditLineOrder(msgspec.Struct, forbid_unknown_fields=True):
    """A credit line for a player's wallet (Art. 16)."""

    user: str
    limit: NonNegative
    id: str = ""  # the grant id: a retry with the same id is not granted twice
    currency: str = ""


# ---- tables ----------------------------------------------------------------------------


class NewTable(msgspec.Struct, forbid_unknown_fields=True):
    game: str
    profile: str
    mode: str = "rng"
    currency: str = ""  # "" = the house profile's currency
    name: Annotated[str, msgspec.Meta(max_length=100)] = ""
    id: str = ""
    settings: dict[str, Any] = {}


class TableSummary(msgspec.Struct):
    """A table as the floor knows it; ``running`` and ``seq``: in the process that answers."""

    id: str
    game: str
    profile: str
    mode: str
    currency: str
    name: str
    settings: dict[str, Any]
    staff: list[str]
    running: bool
    seq: int
    archived: bool = False
    authorisations: list[Authorisation] = []
    # The process serving it, as the answering process last read the leases ("": nobody now);
    # any process forwards a client's commands there.
    owner: str = ""
    # Where to open the websocket to play it at its owner (CASINO_WS_URL; `casino serve
    # --workers N --worker-ports`): no forwarding, and its frames reach one process. "": none
    # known, any process serves it. Stale after a failover: it still works, forwarded.
    ws_url: str = ""


class TableDetail(msgspec.Struct):
    """A table and what the caller may see of it after event ``seq`` (``view``: the game's
    own view, as in the websocket's ``snapshot``)."""

    table: TableSummary
    seq: int
    view: Any


class StaffAssignment(msgspec.Struct, forbid_unknown_fields=True):
    user: str


class Archiving(msgspec.Struct, forbid_unknown_fields=True):
    reason: Text = ""


class ChefAuthorisation(msgspec.Struct, forbid_unknown_fields=True):
    """A director's leave for a chef de table to suspend or close this table (Art. 15)."""

    chef: str
    action: Literal["suspend", "close"]
    reason: Text = ""
    minutes: Annotated[int, msgspec.Meta(ge=1, le=24 * 60)] = 60


class LimitsChange(msgspec.Struct, forbid_unknown_fields=True):
    """New limits from the next round: minimum and maximum (blackjack), minimum and
    maxima per combination kind (roulette: plein, cheval, ..., simple)."""

    minimum: Amount
    maximum: Amount | None = None
    maxima: dict[str, Amount] | None = None
    reason: Text = ""


class LimitsChanged(msgspec.Struct):
    """The seq of the announcement at the table, and the limits now in force."""

    seq: int
    limits: LimitsVersion | None


# ---- health ------------------------------------------------------------------------------


class Alive(msgspec.Struct):
    ok: bool = True


# ---- tournaments ------------------------------------------------------------------------


class NewTournament(msgspec.Struct, forbid_unknown_fields=True):
    """A tournament or Sit&Go as the director creates it (``blackjack.tournament.spec``)."""

    id: Annotated[str, msgspec.Meta(min_length=2, max_length=30)]
    spec: Any  # a TournamentSpec (checked by the service, with the house's own codes)


class TournamentSummary(msgspec.Struct):
    id: str
    name: str
    format: str
    starts_at: int
    buy_in: int
    fee: int
    currency: str
    mode: str
    owner: str  # the process serving it
    # scheduled, registration, closed, running, paused, finished or cancelled
    status: str


class TournamentDetail(msgspec.Struct):
    tournament: TournamentSummary
    seq: int
    view: Any  # blackjack.tournament.view.TournamentView, as the caller may see it


class TournamentCommand(msgspec.Struct, forbid_unknown_fields=True):
    """One command for the coordinator (``blackjack.tournament.commands``), with the caller's
    idempotency key: the same cid again is answered again, never applied twice."""

    command: Any
    cid: Annotated[str, msgspec.Meta(max_length=128)] = ""


class TournamentAnswer(msgspec.Struct):
    cid: str
    seq: int
