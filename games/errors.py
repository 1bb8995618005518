"""The one error type every layer raises for refused input.

``code`` is stable (clients and tests match on it); ``message`` is for a person.
Engines raise it *before* touching their state, so a refused command changes nothing.
"""

from __future__ import annotations

from typing import Any


class GameError(Exception):
    def __init__(self, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r})"
