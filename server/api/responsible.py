"""Responsible gaming (``server.responsible``): a player's own cool-off, self-exclusion and
limits under ``/me``; the desk's self-exclusion for a player who asks, its lifting, and the
age/ID check under ``/accounts/{user}``."""

from __future__ import annotations

from typing import Literal

import msgspec
from litestar import Controller, delete, get, post, put

from server.auth import Principal
from server.policy import DESK, VERIFY, require_roles
from server.responsible import Exclusion, PlayerLimits, ResponsibleGaming


class ExclusionOrder(msgspec.Struct, forbid_unknown_fields=True):
    """A cool-off (24h, 7d, 30d, 6w) or a self-exclusion (6m, 1y, 5y, indefinite)."""

    kind: Literal["cool_off", "self_exclusion"]
    period: str


class DeskExclusionOrder(msgspec.Struct, forbid_unknown_fields=True):
    """A self-exclusion the player asked for at the desk (6m, 1y, 5y, indefinite)."""

    period: str


class Windows(msgspec.Struct, forbid_unknown_fields=True):
    """A limit per rolling window (24 hours, 7 days, 30 days), minor units; null: none."""

    daily: int | None = None
    weekly: int | None = None
    monthly: int | None = None

    def asked(self) -> dict[str, int | None]:
        return {"daily": self.daily, "weekly": self.weekly, "monthly": self.monthly}


class LimitsOrder(msgspec.Struct, forbid_unknown_fields=True):
    """The player's whole set of limits: a window left out (or null) has none. Deposits:
    ``daily``/``weekly``/``monthly``; ``stake`` and ``loss`` the same windows for play.
    Minor units; minutes 1 to 1440."""

    currency: str = ""
    daily: int | None = None
    weekly: int | None = None
    monthly: int | None = None
    reality_check_minutes: int | None = None
    session_limit_minutes: int | None = None
    stake: Windows | None = None
    loss: Windows | None = None


class Verification(msgspec.Struct, forbid_unknown_fields=True):
    """What the desk checked: the document, its number, the date of birth."""

    checked: str


class Verified(msgspec.Struct):
    user: str
    verified: bool = True


PLAYER = ("player",)


class ResponsibleGamingController(Controller):
    path = "/"
    tags = ["responsible gaming"]

    @post("/me/exclusion", operation_id="ExcludeMyself", status_code=200, guards=[require_roles(*PLAYER)],
          summary="Take a break (cool-off) or exclude yourself from play",
          description="Takes effect at once: this token and every open socket of yours stop working. It cannot "
                      "be shortened; a new one replaces it only if it ends later.")
    async def exclude_me(self, caller: Principal, data: ExclusionOrder,
                         responsible_gaming: ResponsibleGaming) -> Exclusion:
        return await responsible_gaming.exclude(caller, caller.id, data.kind, data.period)

    @post("/accounts/{user:str}/exclusion", operation_id="ExcludePlayer", status_code=200,
          guards=[require_roles(*DESK)], summary="Self-exclusion of a player who asks at the desk")
    async def exclude_player(self, caller: Principal, user: str, data: DeskExclusionOrder,
                             responsible_gaming: ResponsibleGaming) -> Exclusion:
        return await responsible_gaming.exclude(caller, user, "self_exclusion", data.period)

    @delete("/accounts/{user:str}/exclusion", operation_id="LiftExclusion", status_code=200,
            guards=[require_roles(*DESK)],
            summary="Lift a self-exclusion whose period is over, at the player's request")
    async def lift(self, caller: Principal, user: str, responsible_gaming: ResponsibleGaming) -> Exclusion:
        return await responsible_gaming.lift(caller, user)

    @get("/me/limits", operation_id="GetMyLimits", guards=[require_roles(*PLAYER)],
         summary="Your deposit limits (with a pending raise and its date) and session settings")
    async def my_limits(self, caller: Principal, responsible_gaming: ResponsibleGaming,
                        currency: str = "") -> PlayerLimits:
        return await responsible_gaming.limits(caller, currency)

    @put("/me/limits", operation_id="SetMyLimits", guards=[require_roles(*PLAYER)],
         summary="Set your limits: lower at once, higher or none after the cooling period")
    async def set_my_limits(self, caller: Principal, data: LimitsOrder,
                            responsible_gaming: ResponsibleGaming) -> PlayerLimits:
        return await responsible_gaming.set_limits(
            caller, data.currency, {"daily": data.daily, "weekly": data.weekly, "monthly": data.monthly},
            data.reality_check_minutes, data.session_limit_minutes,
            stake=data.stake.asked() if data.stake else {}, loss=data.loss.asked() if data.loss else {})

    @post("/accounts/{user:str}/verification", operation_id="VerifyPlayer", status_code=200,
          guards=[require_roles(*VERIFY)], summary="The player's age and identity checked at the desk")
    async def verify(self, caller: Principal, user: str, data: Verification,
                     responsible_gaming: ResponsibleGaming) -> Verified:
        await responsible_gaming.verify(caller, user, data.checked)
        return Verified(user)
