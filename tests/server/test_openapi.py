"""The OpenAPI document describes every answer, built from the app alone (no database):
each route's success with its schema, and its refusals as problem details."""

from __future__ import annotations

import pytest

from server.app import create_app
from server.config import Settings

# Handlers keep Litestar 2's inferred parameters, as litestar-fullstack does; Litestar 2.25
# warns about each one ahead of 3.0 (markers such as NamedDependency, FromPath, JSONBody).
pytestmark = pytest.mark.filterwarnings("ignore::litestar.exceptions.LitestarDeprecationWarning")


def _operations():
    doc = create_app(Settings(jwt_secret="x" * 40)).openapi_schema.to_schema()
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            yield method.upper(), path, op["responses"]


def test_every_success_has_a_schema():
    missing = []
    for method, path, responses in _operations():
        ok = [(status, r) for status, r in responses.items() if status.startswith("2")]
        if len(ok) == 1 and ok[0][0] == "204" and not ok[0][1].get("content"):
            continue  # No Content (logging out of the pages): nothing to describe
        if len(ok) != 1 or "schema" not in ok[0][1].get("content", {}).get("application/json", {}):
            missing.append((method, path))
    assert not missing


def test_every_route_lists_its_refusals_as_problem_details():
    for method, path, responses in _operations():
        for status in ("400", "422", "500"):
            assert set(responses[status]["content"]) == {"application/problem+json"}, (method, path, status)


def test_no_dependency_is_named_like_a_request_field():
    """Litestar reports a body field's validation error by its bare name; were it a
    dependency's name, a malformed request would answer 500 instead of 400."""
    from server.deps import DEPENDENCIES

    doc = create_app(Settings(jwt_secret="x" * 40)).openapi_schema.to_schema()
    schemas = doc["components"]["schemas"]
    names = set()
    for ops in doc["paths"].values():
        for op in ops.values():
            names |= {p["name"] for p in op.get("parameters", [])}
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
            if "$ref" in body:
                names |= set(schemas[body["$ref"].rsplit("/", 1)[1]].get("properties", {}))
    assert names and not names & set(DEPENDENCIES)
