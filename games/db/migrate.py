"""Versioned schema, one owner per layer: each package that owns tables keeps its
``migrations/NNNN_name.sql`` beside its code (``games/ledger/migrations/``,
``server/migrations/``), numbered within the package; the numbers they had in one folder
stay (the ledger's 0001, 0003, 0004; the server's 0002, table limits, and 0100-0107), new
ones follow each package's last.

``migrate`` applies what is missing, package by package in the order given (a package's
tables and views may use those of the packages before it), each file once, in version
order, each in its own transaction, recorded in one ``schema_migrations`` table keyed by
(package, version). A migration never changes after it lands; fixes are new migrations.
Concurrent starters serialise on an advisory lock; a schema already up to date is only
read, so a role without the right to change it can start on it (``require_current``).

Databases migrated before the migrations moved beside their packages have a
``schema_migrations`` keyed by version alone (every file in one folder, ``games/db/``):
the first ``migrate`` converts its rows in place, each to the package whose folder now
holds that file (the file names did not change).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from importlib import resources
from typing import NamedTuple

import asyncpg

log = logging.getLogger("casino.db")

_LOCK_KEY = 0x6361_7369_6E6F  # "casino"

# Older builds kept every migration in one folder; its files now belong to these packages.
# (Which packages make a schema is the caller's to say: the server's is ``server.store.SCHEMA``.)
_ONE_FOLDER_PACKAGES: tuple[str, ...] = ("games.ledger", "server")

_CREATE = """CREATE TABLE IF NOT EXISTS schema_migrations (
    package    text NOT NULL,
    version    int NOT NULL,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (package, version))"""


class Migration(NamedTuple):
    package: str
    version: int
    name: str
    sql: str

    @property
    def label(self) -> str:
        return f"{self.package}/{self.name}"


class MigrationError(Exception):
    """The recorded schema and this build's migrations do not fit together."""


def available(packages: Sequence[str]) -> list[Migration]:
    """Every migration of ``packages``: package by package, each in version order."""
    out: list[Migration] = []
    for package in packages:
        found = sorted(
            Migration(package, int(entry.name.split("_", 1)[0]), entry.name, entry.read_text())
            for entry in resources.files(package).joinpath("migrations").iterdir()
            if entry.name.endswith(".sql")
        )
        for a, b in zip(found, found[1:], strict=False):
            if a.version == b.version:
                raise MigrationError(f"{package}: {a.name} and {b.name} have the same version")
        out += found
    return out


class SchemaStatus(NamedTuple):
    applied: list[str]  # labels ("server/0100_server.sql") of what the database records
    pending: list[Migration]  # what this build would apply, in order
    keyed_by_version: bool  # schema_migrations predates packages: ``migrate`` converts it

    @property
    def current(self) -> bool:
        return not self.pending and not self.keyed_by_version


class SchemaBehind(Exception):
    """The database's schema is older than this build's (``require_current``)."""

    def __init__(self, status: SchemaStatus) -> None:
        what = [m.label for m in status.pending]
        if status.keyed_by_version:
            what.append("schema_migrations keyed by package")
        super().__init__(
            f"the database schema is behind this build: {len(what)} change(s) not applied "
            f"({', '.join(what)}); run `casino db migrate` on this database, then start again"
        )
        self.status = status


async def status(conn: asyncpg.Connection, packages: Sequence[str]) -> SchemaStatus:
    """What the database records and what is missing for ``packages``; reads only."""
    columns = {r[0] for r in await conn.fetch(
        "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass('schema_migrations')"
        " AND attnum > 0 AND NOT attisdropped"
    )}
    if not columns:
        done: set[tuple[str, int]] = set()
        labels: list[str] = []
    elif "package" in columns:
        rows = await conn.fetch("SELECT package, version, name FROM schema_migrations ORDER BY package, version")
        done = {(r["package"], r["version"]) for r in rows}
        labels = [f"{r['package']}/{r['name']}" for r in rows]
    else:
        converted = _by_package(await conn.fetch("SELECT version, name FROM schema_migrations ORDER BY version"),
                                packages)
        done = {(package, version) for package, version, _ in converted}
        labels = [f"{package}/{name}" for package, _, name in converted]
    pending = [m for m in available(packages) if (m.package, m.version) not in done]
    return SchemaStatus(labels, pending, bool(columns) and "package" not in columns)


async def require_current(conn: asyncpg.Connection, packages: Sequence[str]) -> None:
    """Raise ``SchemaBehind`` unless every migration of ``packages`` is recorded; reads only."""
    st = await status(conn, packages)
    if not st.current:
        raise SchemaBehind(st)


async def migrate(conn: asyncpg.Connection, packages: Sequence[str]) -> list[str]:
    """Apply what is missing of ``packages``; return the labels applied now
    (``"games.ledger/0001_ledger.sql"``)."""
    if (await status(conn, packages)).current:
        return []
    applied_now: list[str] = []
    await conn.execute("SELECT pg_advisory_lock($1)", _LOCK_KEY)
    try:
        await _keyed_by_package(conn, packages)
        rows = await conn.fetch("SELECT package, version FROM schema_migrations")
        done = {(r["package"], r["version"]) for r in rows}
        for m in available(packages):
            if (m.package, m.version) in done:
                continue
            async with conn.transaction():
                await conn.execute(m.sql)
                await conn.execute(
                    "INSERT INTO schema_migrations (package, version, name) VALUES ($1, $2, $3)",
                    m.package, m.version, m.name,
                )
            log.debug("schema: applied %s", m.label)
            applied_now.append(m.label)
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", _LOCK_KEY)
    if applied_now:
        per_package = Counter(label.split("/", 1)[0] for label in applied_now)
        log.info("schema: applied %d migration(s) (%s)", len(applied_now),
                 ", ".join(f"{package} {n}" for package, n in per_package.items()))
    return applied_now


async def _keyed_by_package(conn: asyncpg.Connection, packages: Sequence[str]) -> None:
    """Create ``schema_migrations``, or convert one keyed by version alone (under the lock)."""
    has_package = await conn.fetchval(
        "SELECT bool_or(attname = 'package') FROM pg_attribute WHERE attrelid = to_regclass('schema_migrations')"
        " AND attnum > 0 AND NOT attisdropped"
    )
    if has_package is not False:  # NULL: no table yet; true: already keyed by package
        await conn.execute(_CREATE)
        return
    async with conn.transaction():
        old = await conn.fetch("SELECT version, name, applied_at FROM schema_migrations ORDER BY version")
        owners = _by_package(old, packages)
        await conn.execute("DROP TABLE schema_migrations")
        await conn.execute(_CREATE)
        await conn.executemany(
            "INSERT INTO schema_migrations (package, version, name, applied_at) VALUES ($1, $2, $3, $4)",
            [(*owner, r["applied_at"]) for owner, r in zip(owners, old, strict=True)],
        )
    log.info("schema: schema_migrations now keyed by package (%d rows converted)", len(old))


def _by_package(rows: Sequence[asyncpg.Record], packages: Sequence[str]) -> list[tuple[str, int, str]]:
    """Rows of a ``schema_migrations`` keyed by version alone as (package, version, name):
    each file belongs to the package whose folder holds it now."""
    owner = {m.name: m.package for m in available(list(dict.fromkeys([*_ONE_FOLDER_PACKAGES, *packages])))}
    unknown = [r["name"] for r in rows if r["name"] not in owner]
    if unknown:
        raise MigrationError(f"schema_migrations records {', '.join(unknown)}, which no package of this build holds")
    return [(owner[r["name"]], r["version"], r["name"]) for r in rows]
