"""Typed, frozen game events and their game-record form (`../GAME_RECORD.md`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Union

from .cards import Card, CardError, parse_card, parse_placed


class RecordError(ValueError):
    """A record line that cannot be read: not JSON, unknown type, card or seat, missing field."""


@dataclass(frozen=True)
class GameStart:
    profile: str
    variants: tuple[str, ...]
    seats: tuple[str, ...]
    card_values: Mapping[str, int] | None = None
    at: str | None = field(default=None, compare=False)
    source: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Deal:
    round: int | str  # 1-based, or "tiebreak"
    dealer: str
    upcard: Card
    hands: Mapping[str, tuple[Card, ...]] | None = None  # None in an observed game
    at: str | None = field(default=None, compare=False)
    source: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Draw:
    seat: str
    source_pile: str  # "stock" or "discard" (written "from")
    card: Card | None = None
    at: str | None = field(default=None, compare=False)
    source: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Buy:
    seat: str
    penalty: Card | None = None
    at: str | None = field(default=None, compare=False)
    source: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Open:
    seat: str
    melds: tuple[tuple[str, ...], ...]  # as written: jokers may be `JK:9H`
    at: str | None = field(default=None, compare=False)
    source: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class LayOff:
    seat: str
    meld: int
    cards: tuple[str, ...]
    at: str | None = field(default=None, compare=False)
    source: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Discard:
    seat: str
    card: Card
    at: str | None = field(default=None, compare=False)
    source: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class RoundEnd:
    hands: Mapping[str, tuple[Card, ...]]
    at: str | None = field(default=None, compare=False)
    source: str | None = field(default=None, compare=False)


Event = Union[GameStart, Deal, Draw, Buy, Open, LayOff, Discard, RoundEnd]
SOURCES = ("camera", "button", "tablet", "correction")


def _meta(ev: Event, out: dict[str, Any]) -> dict[str, Any]:
    if ev.at is not None:
        out["at"] = ev.at
    if ev.source is not None:
        out["source"] = ev.source
    return out


def event_to_dict(ev: Event) -> dict[str, Any]:
    """The record line of an event, in GAME_RECORD.md's field order."""
    if isinstance(ev, GameStart):
        d: dict[str, Any] = {
            "type": "game",
            "profile": ev.profile,
            "variants": list(ev.variants),
            "seats": list(ev.seats),
        }
        if ev.card_values is not None:
            d["card_values"] = dict(ev.card_values)
    elif isinstance(ev, Deal):
        d = {"type": "deal", "round": ev.round, "dealer": ev.dealer}
        if ev.hands is not None:
            d["hands"] = {s: list(h) for s, h in ev.hands.items()}
        d["upcard"] = ev.upcard
    elif isinstance(ev, Draw):
        d = {"type": "draw", "seat": ev.seat, "from": ev.source_pile}
        if ev.card is not None:
            d["card"] = ev.card
    elif isinstance(ev, Buy):
        d = {"type": "buy", "seat": ev.seat}
        if ev.penalty is not None:
            d["penalty"] = ev.penalty
    elif isinstance(ev, Open):
        d = {"type": "open", "seat": ev.seat, "melds": [list(m) for m in ev.melds]}
    elif isinstance(ev, LayOff):
        d = {"type": "layoff", "seat": ev.seat, "meld": ev.meld, "cards": list(ev.cards)}
    elif isinstance(ev, Discard):
        d = {"type": "discard", "seat": ev.seat, "card": ev.card}
    else:
        d = {"type": "round_end", "hands": {s: list(h) for s, h in ev.hands.items()}}
    return _meta(ev, d)


def _field(d: Mapping[str, Any], key: str, kind: type | tuple[type, ...], what: str) -> Any:
    if key not in d:
        raise RecordError(f'a {d.get("type")} line needs "{key}" ({what})')
    value = d[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise RecordError(f'"{key}" must be {what}, not {value!r}')
    return value


def _seat(d: Mapping[str, Any], seats: tuple[str, ...] | None, key: str = "seat") -> str:
    seat = _field(d, key, str, "a seat name")
    if seats is not None and seat not in seats:
        raise RecordError(f"unknown seat {seat!r}; the seats are {', '.join(seats)}")
    return str(seat)


def _cards(value: Any, key: str, placed: bool = False) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise RecordError(f'"{key}" must be a list of cards, not {value!r}')
    try:
        if placed:
            out: list[str] = []
            for t in value:
                card, role = parse_placed(t)
                out.append(card if role is None else f"{card}:{role}")
            return tuple(out)
        return tuple(parse_card(t) for t in value)
    except CardError as e:
        raise RecordError(f'in "{key}": {e}') from None


def _hands(value: Any, seats: tuple[str, ...] | None, key: str) -> dict[str, tuple[Card, ...]]:
    if not isinstance(value, dict):
        raise RecordError(f'"{key}" must map each seat to its list of cards')
    out: dict[str, tuple[Card, ...]] = {}
    for seat, cards in value.items():
        if seats is not None and seat not in seats:
            raise RecordError(f'unknown seat {seat!r} in "{key}"; the seats are {", ".join(seats)}')
        out[seat] = tuple(Card(c) for c in _cards(cards, f"{key}.{seat}"))
    return out


def _card(d: Mapping[str, Any], key: str) -> Card:
    try:
        return parse_card(d[key])
    except CardError as e:
        raise RecordError(f'in "{key}": {e}') from None


def event_from_dict(d: Any, seats: tuple[str, ...] | None) -> Event:
    """Read one record line (already JSON-decoded); `seats` from the game line, None before it."""
    if not isinstance(d, dict):
        raise RecordError('each line must be a JSON object like {"type": "draw", ...}')
    kind = d.get("type")
    at = d.get("at")
    source = d.get("source")
    if at is not None and not isinstance(at, str):
        raise RecordError(f'"at" must be an ISO-8601 time text, not {at!r}')
    if source is not None and source not in SOURCES:
        raise RecordError(f'"source" must be one of {", ".join(SOURCES)}, not {source!r}')
    meta = {"at": at, "source": source}
    if kind == "game":
        profile = _field(d, "profile", str, "petras or classic")
        variants = d.get("variants", [])
        if not isinstance(variants, list) or not all(isinstance(v, str) for v in variants):
            raise RecordError(f'"variants" must be a list of variant names, not {variants!r}')
        seat_list = _field(d, "seats", list, "the seat names in clockwise order")
        if not all(isinstance(s, str) and s for s in seat_list):
            raise RecordError('"seats" must list non-empty seat names')
        if len(set(seat_list)) != len(seat_list):
            raise RecordError('"seats" names a seat twice')
        values = d.get("card_values")
        if values is not None and not isinstance(values, dict):
            raise RecordError('"card_values" must map ranks to points')
        return GameStart(profile, tuple(variants), tuple(seat_list), values, **meta)
    if seats is None:
        raise RecordError('the first line must be the game line: {"type": "game", "profile": ..., "seats": [...]}')
    if kind == "deal":
        rnd = d.get("round")
        if not (isinstance(rnd, int) and not isinstance(rnd, bool) and rnd >= 1 or rnd == "tiebreak"):
            raise RecordError(f'"round" must be a round number from 1 or "tiebreak", not {rnd!r}')
        hands = _hands(d["hands"], seats, "hands") if d.get("hands") is not None else None
        return Deal(
            rnd,
            _seat(d, seats, "dealer"),
            _card(d, "upcard") if "upcard" in d else _missing(d, "upcard"),
            hands,
            **meta,
        )
    if kind == "draw":
        pile = d.get("from")
        if pile not in ("stock", "discard"):
            raise RecordError(f'"from" must be "stock" or "discard", not {pile!r}')
        card = _card(d, "card") if d.get("card") is not None else None
        if pile == "discard" and card is not None:
            raise RecordError("a draw from the discard pile takes its top card; do not name it")
        return Draw(_seat(d, seats), pile, card, **meta)
    if kind == "buy":
        return Buy(_seat(d, seats), _card(d, "penalty") if d.get("penalty") is not None else None, **meta)
    if kind == "open":
        melds = _field(d, "melds", list, "a list of melds, each a list of cards")
        return Open(_seat(d, seats), tuple(_cards(m, "melds", placed=True) for m in melds), **meta)
    if kind == "layoff":
        idx = _field(d, "meld", int, "the 0-based index of a meld on the table")
        return LayOff(
            _seat(d, seats), idx, _cards(_field(d, "cards", list, "a list of cards"), "cards", placed=True), **meta
        )
    if kind == "discard":
        return Discard(_seat(d, seats), _card(d, "card") if "card" in d else _missing(d, "card"), **meta)
    if kind == "round_end":
        return RoundEnd(_hands(_field(d, "hands", dict, "each seat's shown cards"), seats, "hands"), **meta)
    if kind is None:
        raise RecordError('the line has no "type"')
    raise RecordError(
        f"unknown event type {kind!r}; expected game, deal, draw, buy, open, layoff, discard or round_end"
    )


def _missing(d: Mapping[str, Any], key: str) -> Card:
    raise RecordError(f'a {d.get("type")} line needs "{key}"')
