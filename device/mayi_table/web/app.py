"""The scoreboard web app: the TV page `/`, the host tablet `/host`, a JSON API and live updates.

Every write goes through the `TableHub` (journal first, then the browsers). Live updates are
server-sent events on `/api/live`: the full snapshot on connect, then one message per change, each
carrying its version and the new snapshot. A browser that reconnects (EventSource does it by itself)
gets the current snapshot again, so it never misses a change.

The host's controls need the PIN: `POST /api/host/login` gives a session cookie (or a bearer token);
a wrong PIN counts against the client, and too many in a minute are refused with 429.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
import time
from collections import deque
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, AsyncIterator, Callable

from fastapi import Depends, FastAPI, HTTPException, Query, Request, Response
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles

from ..rules.cards import CardError, parse_card
from ..rules.engine import IllegalMove
from ..rules.events import Event, RecordError, event_from_dict
from ..rules.profiles import PROFILES, VARIANTS
from ..table.hub import HubError, TableHub
from ..table.journal import JournalError
from .models import (
    ConfirmIn,
    DealIn,
    DismissIn,
    ErrorOut,
    EventIn,
    FlagOut,
    GameIn,
    HistoryItem,
    LoginIn,
    ProfilesOut,
    RoundEndIn,
    SessionOut,
    StateOut,
    WriteOut,
)

STATIC = Path(__file__).resolve().parent / "static"
COOKIE = "mayi_host"
KEEPALIVE_S = 15.0  # an SSE comment this often keeps proxies and sleeping tablets from dropping the stream

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorOut, "description": "No valid host session or PIN"},
    403: {"model": ErrorOut, "description": "Wrong PIN"},
    429: {"model": ErrorOut, "description": "Too many wrong PINs from this client; wait"},
}
_REFUSED: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorOut, "description": "No such flag or event"},
    409: {"model": ErrorOut, "description": "The rules (or the journal) refuse the change; the message says why"},
    422: {"model": ErrorOut, "description": "The request does not read (bad card, unknown seat, missing field)"},
}


class HostAuth:
    """The host PIN, sessions, and the limit on wrong PINs (`max_failures` per `window_s` per client)."""

    def __init__(
        self,
        pin: str,
        max_failures: int = 5,
        window_s: float = 60.0,
        session_s: float = 12 * 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not pin:
            raise ValueError("the host PIN must not be empty")
        self.pin = pin
        self.max_failures = max_failures
        self.window_s = window_s
        self.session_s = session_s
        self.clock = clock
        self._failures: dict[str, deque[float]] = {}
        self._sessions: dict[str, float] = {}

    def _recent(self, client: str) -> deque[float]:
        now = self.clock()
        q = self._failures.setdefault(client, deque())
        while q and now - q[0] > self.window_s:
            q.popleft()
        if not q:
            del self._failures[client]  # keep the table small: only clients with recent failures
            return deque()
        return q

    def check_pin(self, client: str, pin: str) -> None:
        """Raise 429 while the client is locked out, 403 for a wrong PIN (counted)."""
        recent = self._recent(client)
        if len(recent) >= self.max_failures:
            wait = int(self.window_s - (self.clock() - recent[0])) + 1
            raise HTTPException(429, f"too many wrong PINs; try again in {wait} s", headers={"Retry-After": str(wait)})
        if not hmac.compare_digest(pin.encode(), self.pin.encode()):
            self._failures.setdefault(client, deque()).append(self.clock())
            left = self.max_failures - len(self._recent(client))
            raise HTTPException(403, f"wrong PIN ({left} tries left this minute)")

    def new_session(self) -> str:
        now = self.clock()
        self._sessions = {t: exp for t, exp in self._sessions.items() if exp > now}
        token = secrets.token_urlsafe(24)
        self._sessions[token] = now + self.session_s
        return token

    def valid(self, token: str | None) -> bool:
        if not token:
            return False
        exp = self._sessions.get(token)
        return exp is not None and exp > self.clock()

    def end(self, token: str | None) -> None:
        if token:
            self._sessions.pop(token, None)


def _client(request: Request) -> str:
    return request.client.host if request.client is not None else "unknown"


def _token(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return request.cookies.get(COOKIE)


def create_app(hub: TableHub, pin: str, *, auth: HostAuth | None = None, title: str = "May I? Table") -> FastAPI:
    """The web app over `hub`; `pin` guards the host's controls (`auth` replaces the default limits)."""
    host_auth = auth if auth is not None else HostAuth(pin)
    app = FastAPI(
        title=title,
        version="1",
        description="Scoreboard and host controls of the May I? table. Live updates: `GET /api/live` "
        "(server-sent events).",
        responses={400: {"model": ErrorOut, "description": "The body is not valid JSON"}},
    )
    app.state.hub = hub
    app.state.auth = host_auth

    # ----- errors: a clear 4xx with the engine's or journal's message, never a traceback ----------
    @app.exception_handler(IllegalMove)
    async def _illegal(request: Request, exc: IllegalMove) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=409)

    @app.exception_handler(RecordError)
    async def _record(request: Request, exc: RecordError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=422)

    @app.exception_handler(CardError)
    async def _card(request: Request, exc: CardError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=422)

    @app.exception_handler(HubError)
    async def _hub(request: Request, exc: HubError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=exc.status)

    @app.exception_handler(JournalError)
    async def _journal(request: Request, exc: JournalError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=409)

    def require_host(request: Request) -> None:
        pin_header = request.headers.get("x-host-pin")
        if pin_header is not None:
            host_auth.check_pin(_client(request), pin_header)
            return
        token = _token(request)
        if token is None:
            raise HTTPException(401, "host controls need the PIN: log in on /host")
        if not host_auth.valid(token):
            raise HTTPException(401, "the host session has expired or is unknown; log in again")

    host = [Depends(require_host)]

    def seats() -> tuple[str, ...] | None:
        game = hub.snapshot()["game"]
        return tuple(game["seats"]) if game is not None else None

    def read_event(line: dict[str, Any]) -> Event:
        ev = event_from_dict(line, seats() if line.get("type") != "game" else None)
        if ev.source is None:  # the host typed it: mark it so the record says where it came from
            from dataclasses import replace

            ev = replace(ev, source="tablet")
        return ev

    def written(seq: int) -> WriteOut:
        return WriteOut(seq=seq, version=hub.version)

    # ----- pages ------------------------------------------------------------------------------
    @app.get("/", include_in_schema=False)
    def scoreboard() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/host", include_in_schema=False)
    def host_page() -> FileResponse:
        return FileResponse(STATIC / "host.html", headers={"Cache-Control": "no-cache"})

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    # ----- public API -------------------------------------------------------------------------
    @app.get("/api/state", response_model=StateOut, tags=["public"])
    def state() -> dict[str, Any]:
        """The full public state: only cards face-up on the table."""
        return hub.snapshot()

    @app.get("/api/history", response_model=list[HistoryItem], tags=["public"])
    def history() -> list[dict[str, Any]]:
        """The accepted events in order, with the cards nobody has seen (hands, stock draws) removed."""
        return hub.history(public=True)

    @app.get("/api/flags", response_model=list[FlagOut], tags=["public"])
    def flags(all: bool = Query(False, description="Include confirmed and dismissed flags")) -> list[dict[str, Any]]:
        return hub.flags(open_only=not all)

    @app.get(
        "/api/flags/{seq}/image",
        tags=["public"],
        response_class=Response,
        responses={200: {"content": {"image/jpeg": {}}}, 404: {"model": ErrorOut}},
    )
    def flag_image(seq: int) -> Response:
        """The camera crop stored with a flag."""
        data, media = hub.flag_image(seq)
        return Response(data, media_type=media, headers={"Cache-Control": "max-age=3600"})

    @app.get("/api/profiles", response_model=ProfilesOut, tags=["public"])
    def profiles() -> ProfilesOut:
        return ProfilesOut(profiles=list(PROFILES), variants=list(VARIANTS))

    @app.get(
        "/api/live",
        tags=["public"],
        response_class=StreamingResponse,
        responses={200: {"content": {"text/event-stream": {}}, "description": "Server-sent events"}},
    )
    async def live(
        request: Request, once: bool = Query(False, description="Send the snapshot only, then close")
    ) -> StreamingResponse:
        """Live updates as server-sent events: `snapshot` (the full state) on connect, then one
        `change` per new version (`{"version", "change", "state"}`), `id` the version. A client that
        reconnects gets a fresh snapshot, so nothing is missed."""
        sub, first = hub.subscribe(asyncio.get_running_loop())

        async def stream() -> AsyncIterator[str]:
            try:
                yield f"retry: 2000\nid: {first.version}\nevent: snapshot\ndata: {first.text}\n\n"
                if once:
                    return
                while True:
                    try:
                        msg = await asyncio.wait_for(sub.get(), KEEPALIVE_S)
                    except TimeoutError:
                        yield ": keepalive\n\n"
                        continue
                    if msg is None:  # the hub closed, or this client fell too far behind
                        return
                    if msg.version <= first.version:
                        continue
                    yield f"id: {msg.version}\nevent: change\ndata: {msg.text}\n\n"
            finally:
                sub.close()

        return StreamingResponse(
            stream(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    @app.get("/healthz", tags=["public"], include_in_schema=False)
    def healthz() -> dict[str, Any]:
        return {"ok": True, "version": hub.version}

    # ----- host session -----------------------------------------------------------------------
    @app.post(
        "/api/host/login", response_model=SessionOut, tags=["host"], responses={403: _ERRORS[403], 429: _ERRORS[429]}
    )
    def login(body: LoginIn, request: Request, response: Response) -> SessionOut:
        """Check the PIN; sets the session cookie. Too many wrong PINs in a minute: 429."""
        host_auth.check_pin(_client(request), body.pin)
        token = host_auth.new_session()
        response.set_cookie(COOKIE, token, max_age=int(host_auth.session_s), httponly=True, samesite="strict", path="/")
        response.headers["X-Host-Token"] = token
        return SessionOut(ok=True, expires_in=int(host_auth.session_s))

    @app.post("/api/host/logout", response_model=SessionOut, tags=["host"])
    def logout(request: Request, response: Response) -> SessionOut:
        host_auth.end(_token(request))
        response.delete_cookie(COOKIE, path="/")
        return SessionOut(ok=False, expires_in=0)

    @app.get("/api/host/session", response_model=SessionOut, tags=["host"], dependencies=host, responses=_ERRORS)
    def session() -> SessionOut:
        return SessionOut(ok=True, expires_in=int(host_auth.session_s))

    # ----- host controls ------------------------------------------------------------------------
    both = {**_ERRORS, **_REFUSED}

    @app.get("/api/host/history", response_model=list[HistoryItem], tags=["host"], dependencies=host, responses=both)
    def host_history() -> list[dict[str, Any]]:
        """Every accepted event as recorded (hands included), with the seq corrections name."""
        return hub.history(public=False)

    @app.post("/api/host/game", response_model=WriteOut, tags=["host"], dependencies=host, responses=both)
    def start_game(body: GameIn) -> WriteOut:
        """Set up a new game. A game still in play is only replaced with `abandon: true` (it is archived)."""
        names = [s.strip() for s in body.seats]
        if any(not s or len(s) > 24 for s in names):
            raise HTTPException(422, "each seat needs a name of 1 to 24 characters")
        if len(set(names)) != len(names):
            raise HTTPException(422, "two seats have the same name")
        return written(hub.start_game(body.profile, names, body.variants, body.first_dealer, body.abandon))

    @app.post("/api/host/deal", response_model=WriteOut, tags=["host"], dependencies=host, responses=both)
    def deal(body: DealIn) -> WriteOut:
        """Start the next round with the upcard the table turned."""
        return written(hub.start_round(parse_card(body.upcard), body.dealer))

    @app.post("/api/host/round-end", response_model=WriteOut, tags=["host"], dependencies=host, responses=both)
    def round_end(body: RoundEndIn) -> WriteOut:
        """End the round with the cards each seat spread; the engine scores them."""
        return written(hub.append_event(read_event({"type": "round_end", "hands": body.hands}), "tablet"))

    @app.post("/api/host/events", response_model=WriteOut, tags=["host"], dependencies=host, responses=both)
    def append(body: EventIn) -> WriteOut:
        """Record an event the camera missed (a game-record line)."""
        return written(hub.append_event(read_event(body.event), "tablet"))

    @app.put("/api/host/events/{seq}", response_model=WriteOut, tags=["host"], dependencies=host, responses=both)
    def replace(seq: int, body: EventIn) -> WriteOut:
        """Replace accepted event `seq`; refused (409) unless the corrected game replays."""
        return written(hub.replace(seq, read_event(body.event), "tablet"))

    @app.post("/api/host/undo", response_model=WriteOut, tags=["host"], dependencies=host, responses=both)
    def undo() -> WriteOut:
        """Remove the last accepted event."""
        return written(hub.undo("tablet"))

    @app.post(
        "/api/host/flags/{seq}/confirm", response_model=WriteOut, tags=["host"], dependencies=host, responses=both
    )
    def confirm(seq: int, body: ConfirmIn | None = None) -> WriteOut:
        """Accept a flag's event, or the host's edit of it, as the next event."""
        ev = read_event(body.event) if body is not None and body.event is not None else None
        return written(hub.confirm(seq, ev, "tablet"))

    @app.post(
        "/api/host/flags/{seq}/dismiss", response_model=WriteOut, tags=["host"], dependencies=host, responses=both
    )
    def dismiss(seq: int, body: DismissIn | None = None) -> WriteOut:
        """Close a flag with nothing recorded."""
        return written(hub.dismiss(seq, body.reason if body is not None else "", "tablet"))

    @app.get(
        "/api/host/record",
        tags=["host"],
        dependencies=host,
        response_class=Response,
        responses={200: {"content": {"application/x-ndjson": {}}}, **_ERRORS},
    )
    def record() -> Response:
        """The game record (`.mayi.jsonl`) of the accepted events."""
        text = "".join(line + "\n" for line in hub.record_lines())
        name = f"mayi-{datetime.now(UTC).strftime('%Y%m%d-%H%M')}.mayi.jsonl"
        return Response(
            text, media_type="application/x-ndjson", headers={"Content-Disposition": f'attachment; filename="{name}"'}
        )

    @app.get(
        "/api/host/camera.jpg",
        tags=["host"],
        dependencies=host,
        response_class=Response,
        responses={200: {"content": {"image/jpeg": {}}}, 404: {"model": ErrorOut}, **_ERRORS},
    )
    def camera() -> Response:
        """The latest annotated camera frame (it can show hands: host only)."""
        view = hub.camera_view()
        if view is None:
            raise HTTPException(404, "no camera frame yet")
        data, at = view
        return Response(data, media_type="image/jpeg", headers={"Cache-Control": "no-store", "X-Frame-At": at})

    return app
