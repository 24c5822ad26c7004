"""The pure rules core of May I?: standard library only, no I/O beyond record text."""

from .cards import Card, CardError, make_deck, parse_card
from .engine import Game, IllegalMove, apply, new_game
from .events import Buy, Deal, Discard, Draw, Event, GameStart, LayOff, Open, RecordError, RoundEnd
from .profiles import PROFILES, VARIANTS, Contract, ProfileError, RuleProfile, make_profile

__all__ = [
    "Card",
    "CardError",
    "make_deck",
    "parse_card",
    "Game",
    "IllegalMove",
    "apply",
    "new_game",
    "Buy",
    "Deal",
    "Discard",
    "Draw",
    "Event",
    "GameStart",
    "LayOff",
    "Open",
    "RecordError",
    "RoundEnd",
    "PROFILES",
    "VARIANTS",
    "Contract",
    "ProfileError",
    "RuleProfile",
    "make_profile",
]
