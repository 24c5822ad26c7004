"""Cards in the game-record notation (`7H`, `10S`, `JK`, `JK:9H`) and decks as multisets.

A card is its canonical text. Two decks hold two `7H`; nothing depends on card identity
beyond rank and suit, so hands, stock and piles are `collections.Counter`s of card texts.
"""

from __future__ import annotations

from collections import Counter
from typing import NewType

Card = NewType("Card", str)

JOKER = Card("JK")
RANKS: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS: tuple[str, ...] = ("S", "H", "D", "C")
RANK_VALUE: dict[str, int] = {r: i + 1 for i, r in enumerate(RANKS)}  # A=1 .. K=13
_SUIT_ALIASES = {"S": "S", "H": "H", "D": "D", "C": "C", "♠": "S", "♥": "H", "♦": "D", "♣": "C"}
_RANK_ALIASES = {r: r for r in RANKS} | {"T": "10"}


class CardError(ValueError):
    """A card text that is not in the record notation."""


_CANON: dict[str, Card] = {}


def _build_canon() -> None:
    for r in RANKS:
        for s in SUITS:
            _CANON[r + s] = Card(r + s)
    _CANON["JK"] = JOKER


_build_canon()


def parse_card(text: object) -> Card:
    """Parse a natural card or a plain joker: `7H`, `10S`, `TS`, `Q♣`, `JK`."""
    if not isinstance(text, str):
        raise CardError(f"a card must be written as text like '7H', not {text!r}")
    hit = _CANON.get(text)
    if hit is not None:
        return hit
    t = text.strip().upper()
    if t in ("JK", "JOKER"):
        return JOKER
    if len(t) >= 2:
        rank = _RANK_ALIASES.get(t[:-1])
        suit = _SUIT_ALIASES.get(text.strip()[-1]) or _SUIT_ALIASES.get(t[-1])
        if rank is not None and suit is not None:
            return _CANON[rank + suit]
    raise CardError(f"unknown card {text!r} (write ranks A 2-10 J Q K and suits S H D C, e.g. '10H', or JK)")


def parse_placed(text: object) -> tuple[Card, Card | None]:
    """Parse a card as laid in a meld: a natural card, `JK`, or `JK:9H` (joker fixed as 9H).

    Returns (physical card, fixed role or None). A role may name only a rank (`JK:9`)
    for a joker in a group, where the suit does not matter.
    """
    if isinstance(text, str) and ":" in text:
        head, _, role = text.partition(":")
        if parse_card(head) != JOKER:
            raise CardError(f"only a joker can stand for another card, not {text!r}")
        role = role.strip().upper()
        rank_only = _RANK_ALIASES.get(role)
        if rank_only is not None:
            return JOKER, Card(rank_only)
        fixed = parse_card(role)
        if fixed == JOKER:
            raise CardError(f"a joker must stand for a natural card, not {text!r}")
        return JOKER, fixed
    return parse_card(text), None


def is_joker(card: str) -> bool:
    return card == JOKER


def rank_of(card: str) -> str:
    """Rank text of a natural card (`'10'` for `10H`); a rank-only role is its own rank."""
    return card[:-1] if card[-1] in SUITS else card


def suit_of(card: str) -> str:
    return card[-1]


def rank_value(card: str) -> int:
    return RANK_VALUE[rank_of(card)]


def sort_key(card: str) -> tuple[int, int, int]:
    if card == JOKER:
        return (1, 0, 0)
    return (0, SUITS.index(suit_of(card)), rank_value(card))


def sorted_cards(cards: Counter[Card] | list[Card]) -> list[Card]:
    items = list(cards.elements()) if isinstance(cards, Counter) else list(cards)
    return sorted(items, key=sort_key)


def make_deck(decks: int, jokers: int) -> Counter[Card]:
    """`decks` standard 52-card decks mixed, plus `jokers` jokers."""
    deck: Counter[Card] = Counter({Card(r + s): decks for r in RANKS for s in SUITS})
    if jokers:
        deck[JOKER] = jokers
    return deck


def natural_cards() -> list[Card]:
    return [Card(r + s) for s in SUITS for r in RANKS]
