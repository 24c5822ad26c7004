"""Schemathesis against the app's own OpenAPI spec, in-process: no 5xx, and every response matches its schema."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import positive_data_acceptance

from mayi_table.table.hub import TableHub
from mayi_table.web.app import create_app

from .conftest import PIN, bot_events

# schemathesis parametrizes at collection time, so the app exists at import; the fixture below cleans up
_DIR = Path(tempfile.mkdtemp(prefix="mayi-schema-"))
_HUB = TableHub(_DIR / "journal.sqlite3")
_EVENTS = bot_events(seed=3, rounds=1)
for _ev in _EVENTS[:25]:  # a game in play, so the controls have something to refuse or accept
    _HUB.append_event(_ev)
_HUB.flag(_EVENTS[25], "a test flag", b"\xff\xd8\xff\xd9")
# the live stream never ends by itself; test_live covers it
schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(_HUB, PIN)).exclude(path="/api/live")


@pytest.fixture(scope="module", autouse=True)
def _cleanup() -> Iterator[None]:
    yield
    _HUB.close()
    shutil.rmtree(_DIR, ignore_errors=True)


@schema.parametrize()
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms(case: schemathesis.Case) -> None:
    # with the PIN, so the controls run for real (the PIN itself is covered in test_api).
    # A body can fit the schema and still name a card that is not one or a seat not at the table:
    # the game refuses those with a 422 (test_api covers each), so schema-valid is not always accepted.
    case.call_and_validate(headers={"X-Host-PIN": PIN}, excluded_checks=[positive_data_acceptance])
