"""`.mayi.jsonl` game records: read, write, and replay them through the engine."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from .engine import Game, IllegalMove
from .events import Event, GameStart, RecordError, event_from_dict, event_to_dict


def dumps_event(ev: Event) -> str:
    return json.dumps(event_to_dict(ev), ensure_ascii=False, separators=(",", ":"))


def write_record(events: Iterable[Event], path: str | Path) -> None:
    text = "".join(dumps_event(ev) + "\n" for ev in events)
    Path(path).write_text(text, encoding="utf-8")


@dataclass
class ReplayError:
    line: int  # 1-based
    message: str


def read_events(lines: Iterable[str]) -> Iterator[tuple[int, Event | ReplayError]]:
    """Each non-blank line as an event, or the error that stops the record there."""
    seats: tuple[str, ...] | None = None
    for n, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as e:
            yield n, ReplayError(n, f"not a JSON object: {getattr(e, 'msg', str(e))}")
            return
        try:
            ev = event_from_dict(data, seats if n > 1 or seats is not None else None)
        except RecordError as e:
            yield n, ReplayError(n, str(e))
            return
        if isinstance(ev, GameStart):
            if seats is not None:
                yield n, ReplayError(n, "the game line may only be the first line")
                return
            seats = ev.seats
        yield n, ev


def replay_lines(lines: Iterable[str]) -> tuple[dict[str, Any], Game | None]:
    """Replay a record; the result object of `mayi-table replay --json`, and the game reached."""
    game: Game | None = None
    for n, item in read_events(lines):
        if isinstance(item, ReplayError):
            return _failed(game, item), game
        try:
            if game is None:
                if not isinstance(item, GameStart):
                    return _failed(None, ReplayError(n, "the first line must be the game line")), None
                game = Game(item)
            else:
                game.apply(item)
        except IllegalMove as e:
            return _failed(game, ReplayError(n, str(e))), game
    if game is None:
        return _failed(None, ReplayError(1, "the record is empty; it must start with the game line")), None
    return result_of(game), game


def replay_file(path: str | Path) -> tuple[dict[str, Any], Game | None]:
    try:
        with open(path, encoding="utf-8") as f:
            return replay_lines(f)
    except UnicodeDecodeError as e:
        return _failed(None, ReplayError(_line_of_offset(path, e.start), "the record is not UTF-8 text")), None


def _line_of_offset(path: str | Path, offset: int) -> int:
    return Path(path).read_bytes()[:offset].count(b"\n") + 1


def result_of(game: Game) -> dict[str, Any]:
    return {
        "ok": True,
        "complete": game.complete,
        "rounds": [{"round": r.round, "went_out": r.went_out, "scores": dict(r.scores)} for r in game.results],
        "totals": game.totals(),
        "winners": list(game.winners) if game.complete else [],
        "state": game.state_dict(),
    }


def _failed(game: Game | None, err: ReplayError) -> dict[str, Any]:
    out: dict[str, Any] = {"ok": False, "error": {"line": err.line, "message": err.message}}
    if game is not None:
        partial = result_of(game)
        partial.pop("ok")
        out.update(partial)
    return out


def score_sheet(result: dict[str, Any]) -> str:
    """A readable score sheet: rounds by seats, totals and winners."""
    if not result.get("ok") and "rounds" not in result:
        err = result["error"]
        return f"line {err['line']}: {err['message']}"
    seats = list(result["totals"])
    width = max([6] + [len(s) for s in seats])
    head = f"{'round':<9}" + "".join(f"{s:>{width + 2}}" for s in seats) + "   went out"
    lines = [head, "-" * len(head)]
    for r in result["rounds"]:
        row = f"{str(r['round']):<9}" + "".join(f"{r['scores'].get(s, ''):>{width + 2}}" for s in seats)
        lines.append(row + f"   {r['went_out'] or '(no winner)'}")
    lines.append("-" * len(head))
    lines.append(f"{'total':<9}" + "".join(f"{result['totals'][s]:>{width + 2}}" for s in seats))
    if result.get("complete"):
        lines.append(f"winner{'s' if len(result['winners']) > 1 else ''}: {', '.join(result['winners'])}")
    else:
        st = result["state"]
        lines.append(f"game in progress: round {st.get('round')}, {st.get('turn') or 'nobody'} to act")
    if not result.get("ok"):
        err = result["error"]
        lines.append(f"stopped at line {err['line']}: {err['message']}")
    return "\n".join(lines)


def as_observed(events: list[Event]) -> list[Event]:
    """The record the camera would have made of a known game: no hands, no stock cards, no
    penalty cards, and a `round_end` showing each hand when a round ends (GAME_RECORD.md)."""
    from dataclasses import replace

    from .events import Buy, Deal, Draw, RoundEnd

    out: list[Event] = []
    game: Game | None = None
    for ev in events:
        if isinstance(ev, GameStart):
            game = Game(ev)
            out.append(ev)
            continue
        assert game is not None
        game.apply(ev)
        if isinstance(ev, Deal):
            out.append(replace(ev, hands=None))
        elif isinstance(ev, Draw) and ev.source_pile == "stock":
            out.append(replace(ev, card=None))
        elif isinstance(ev, Buy):
            out.append(replace(ev, penalty=None))
        else:
            out.append(ev)
        r = game.round
        if r is not None and r.over and not isinstance(ev, RoundEnd):
            out.append(RoundEnd({s: tuple(sorted(r.hands[s].elements())) for s in r.players}))
    return out
