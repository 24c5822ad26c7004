"""The referee: turns button claims, camera snapshots and tablet input into game events, checks them
with the rules engine and journals them before they are applied.

- `claims`: "May I?" claim windows over seat button presses (pure code, injected clock).
- `journal`: the write-ahead SQLite journal of accepted events, flags and corrections.
"""

from .claims import ClaimDesk, ClaimError, ClaimWindow, Debouncer, Decision, Press, PressOutcome
from .journal import Entry, Flag, Journal, JournalError

__all__ = [
    "ClaimDesk",
    "ClaimError",
    "ClaimWindow",
    "Debouncer",
    "Decision",
    "Press",
    "PressOutcome",
    "Entry",
    "Flag",
    "Journal",
    "JournalError",
]
