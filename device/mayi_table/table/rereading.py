"""Readings the rules settle: a card whose best reading contradicts the game, when one of its next
readings (`SeenCard.alternatives`, from the recogniser's classifier) fits, is taken as that one.

The recogniser confuses a few look-alike indices (7S and 7C, 3C and 4C, 5D and 6D on small blurred
marks); its best guess is then wrong, but the right name is usually its second or third. The game
knows more than one frame does:

- `reread_melds`: a meld on the table that no longer shows one of its cards, while its row shows a
  card the meld does not hold whose next readings name the missing one, is the meld read wrong: that
  card is renamed (it lies in the meld's place; the meld did not change).
- `repair`: an open, a lay-off or the spread hands of a round's end that the engine refuses (a run
  with a wrong card, a card shown more often than the decks hold) is tried again with one or two of
  its cards renamed to next readings; the likeliest version the engine accepts is taken. Likeliest
  means the highest product, over the renamed cards, of (next reading's probability / best reading's).
- faint readings (the recogniser may pass on cards read under the referee's `min_confidence`) are no
  cards (`without_faint`), but for a meld's own card, which the meld explains, and for an open the
  engine refuses without them and takes with them (`faint_in`): a card of a long run read faintly must
  not split the run or leave a gap in it.

Either way the referee flags what it renamed or read faintly, so the host sees it and can correct it; a
refusal that no renaming explains stays a refusal.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from itertools import combinations
from typing import Callable, Sequence

from ..rules.engine import Game, IllegalMove, apply
from ..rules.events import Event
from ..rules.melds import Meld
from ..vision.table_reading import SeenCard, SeenMeld, TableSnapshot

REREAD_MIN = 0.05  # a next reading less likely than this is never taken
MAX_TRIES = 300  # engine checks per refused event (the likeliest renamings first)

Renaming = tuple[tuple[SeenCard, str], ...]  # (card as read, name it is taken for)


def best_row(meld: Meld, rows: Sequence[SeenMeld], used: set[int]) -> int | None:
    """The row (index into `rows`, not in `used`) showing most of a meld's cards, and more than half of
    them (the first such row when several show as many); None when no row does."""
    best: tuple[int, int] | None = None
    want: Counter[str] = Counter(str(c) for c in meld.cards)
    for j, row in enumerate(rows):
        if j in used:
            continue
        overlap = sum((want & Counter(row.names)).values())
        if overlap * 2 > len(meld.cards) and (best is None or overlap > best[0]):
            best = (overlap, j)
    return None if best is None else best[1]


def row_beyond(meld: Meld, row: SeenMeld) -> tuple[Counter[str], list[int]]:
    """The meld's cards its row does not show, and the places (in the row) of the cards it shows beyond
    the meld. Of more cards of one name than the meld holds, the surest readings are the meld's: a
    card laid off beside its look-alike (3C read as 4C beside the run's 4C) is the new one, and its
    next readings can then settle it."""
    rest: Counter[str] = Counter(str(c) for c in meld.cards)
    extra: list[int] = []
    for i in sorted(range(len(row.cards)), key=lambda i: -row.cards[i].confidence):
        if rest[row.cards[i].card] > 0:
            rest[row.cards[i].card] -= 1
        else:
            extra.append(i)
    return rest, sorted(extra)


def renamed(card: SeenCard, name: str) -> SeenCard:
    """The card taken for `name`; its confidence stays that of the mark's reading, and what it was read
    as becomes one of its next readings."""
    others = tuple((n, p) for n, p in card.alternatives if n != name)
    return replace(card, card=name, alternatives=((card.card, card.confidence),) + others)


def _alternative(card: SeenCard, name: str) -> float:
    return next((p for n, p in card.alternatives if n == name and p >= REREAD_MIN), 0.0)


def reread_melds(
    snap: TableSnapshot, melds: Sequence[Meld], zone_of: Sequence[int]
) -> tuple[TableSnapshot, Renaming, set[int]]:
    """Rows of table melds renamed where the meld misses a card and its row shows a card read as another
    whose next readings name it (`zone_of[k]`: the seat zone of meld k, -1 if none); also the tracks of
    the cards that rows show of their melds (a faint reading of one is the meld's card: kept)."""
    seats = [list(rows) for rows in snap.seats]
    done: list[tuple[SeenCard, str]] = []
    held: set[int] = set()
    used: dict[int, set[int]] = {}
    for k, meld in enumerate(melds):
        zone = zone_of[k]
        if zone < 0 or zone >= len(seats):
            continue
        taken = used.setdefault(zone, set())
        j = best_row(meld, seats[zone], taken)
        if j is None:
            continue
        taken.add(j)
        row = seats[zone][j]
        rest, extra = row_beyond(meld, row)
        held.update(c.track for i, c in enumerate(row.cards) if i not in extra)
        if not +rest or not extra:
            continue
        cards = list(row.cards)
        # the likeliest (card, missing name) first, each card and each missing copy used once
        options = sorted(
            ((_alternative(cards[i], name), i, name) for i in extra for name in rest if rest[name] > 0),
            key=lambda o: (-o[0], o[1], o[2]),
        )
        changed: set[int] = set()
        for p, i, name in options:
            if p <= 0 or i in changed or rest[name] <= 0:
                continue
            done.append((cards[i], name))
            held.add(cards[i].track)
            cards[i] = renamed(cards[i], name)
            changed.add(i)
            rest[name] -= 1
        if changed:
            seats[zone][j] = SeenMeld(tuple(cards))
    if not done:
        return snap, (), held
    return replace(snap, seats=tuple(tuple(rows) for rows in seats)), tuple(done), held


def without_faint(snap: TableSnapshot, min_confidence: float, keep: set[int]) -> TableSnapshot:
    """The snapshot without readings under `min_confidence`, but for the cards of tracks in `keep`.
    Rows keep their place (a faint card between two cards of a row still joined them)."""

    def sure(c: SeenCard) -> bool:
        return c.confidence >= min_confidence or c.track in keep

    if all(sure(c) for c in snap.all_cards()):
        return snap
    seats = []
    for rows in snap.seats:
        kept = (SeenMeld(tuple(c for c in row.cards if sure(c))) for row in rows)
        seats.append(tuple(row for row in kept if row.cards))
    top = snap.discard_top if snap.discard_top is not None and sure(snap.discard_top) else None
    return replace(
        snap,
        seats=tuple(seats),
        discard=tuple(c for c in snap.discard if sure(c)),
        discard_top=top,
        stray=tuple(c for c in snap.stray if sure(c)),
    )


def faint_in(rows: Sequence[SeenMeld], full: TableSnapshot, min_confidence: float) -> list[SeenMeld]:
    """`rows` (of a snapshot without faint readings) as `full` shows them, faint readings included: the
    row of `full` holding a row's cards, in its order."""
    out = []
    for row in rows:
        tracks = {c.track for c in row.cards}
        whole = next(
            (r for rs in full.seats for r in rs if tracks <= {c.track for c in r.cards}),
            row,
        )
        out.append(SeenMeld(tuple(c for c in whole.cards if c.track in tracks or c.confidence < min_confidence)))
    return out


def accepted(game: Game, ev: Event) -> bool:
    """Whether the engine would take `ev` now (the game itself is left as it is)."""
    try:
        apply(game, ev)
    except IllegalMove:
        return False
    return True


def repair(
    game: Game, cards: Sequence[SeenCard], build: Callable[[list[str]], Event], jokers: bool = True
) -> tuple[Event, Renaming] | None:
    """The likeliest version of a refused event, with one or two of its `cards` renamed to next
    readings, that the engine accepts; None if none is. `build` writes the event from the cards' names
    (in the order of `cards`); `jokers=False` never renames a card into or out of a joker (a joker laid
    on a run is written with its role, which a plain renaming would not give it)."""
    names = [c.card for c in cards]
    singles: list[tuple[float, int, str]] = []
    for i, c in enumerate(cards):
        for name, p in c.alternatives:
            if p < REREAD_MIN or (not jokers and "JK" in (name, c.card)):
                continue
            singles.append((p / max(c.confidence, 1e-6), i, name))
    tries: list[tuple[float, tuple[tuple[int, str], ...]]] = [(r, ((i, n),)) for r, i, n in singles]
    tries += [(ra * rb, ((ia, na), (ib, nb))) for (ra, ia, na), (rb, ib, nb) in combinations(singles, 2) if ia != ib]
    tries.sort(key=lambda t: (-t[0], t[1]))
    for _, change in tries[:MAX_TRIES]:
        trial = list(names)
        for i, name in change:
            trial[i] = name
        candidate = build(trial)
        if accepted(game, candidate):
            return candidate, tuple((cards[i], name) for i, name in change)
    return None


def describe(renaming: Renaming) -> str:
    return ", ".join(f"{c.card} as {name}" for c, name in renaming)


def with_faint(whole: Sequence[SeenMeld], faint_below: float) -> list[tuple[list[SeenMeld], list[SeenCard]]]:
    """Versions of rows (given with their faint readings) to try, fewest faint readings first: each
    faint reading alone, then all of them; with the faint readings each version keeps."""
    faint = [c for row in whole for c in row.cards if c.confidence < faint_below]
    choices = [[c] for c in faint] + ([faint] if len(faint) > 1 else [])
    out = []
    for keep in choices:
        rows = [SeenMeld(tuple(c for c in row.cards if c.confidence >= faint_below or c in keep)) for row in whole]
        out.append(([row for row in rows if row.cards], keep))
    return out
