"""The referee: stable table snapshots and "May I?" buttons in, journaled observed-mode events out.

Per camera frame the caller runs the reader and hands the referee what it publishes:

    snap = reader.feed(cards, frame, now)
    if snap is not None:
        referee.on_snapshot(snap, now)
    referee.tick(now)                      # claim windows decide by time
    # on a button: referee.on_press(seat, now), or referee.on_press(seat, now, long=True)

What a snapshot difference means (the engine copy says whose turn it is and what lies where):

- a new card on top of the discard pile: the seat to act discarded it; if that seat has not drawn
  yet (no take from the pile was seen), it drew from the stock first (the stock is face down);
- the top card gone, the card under it on top: the seat to act took it as its draw, unless a claim
  window is deciding a buy (then the referee waits for the window: the buy comes from the button);
- new rows in front of the seat to act, which has not laid its contract: it opened;
- cards added to a meld (matched to the engine's melds by content, in the meld owner's zone): the
  seat to act laid them off;
- after a seat went out: once every seat shows as many spread cards as the engine says it holds
  (or when a seat holds its button down), the round ends with those hands (a card in a meld's row
  where that meld misses a card is the meld's own card misread, when the hands then fit); then a lone
  card on the discard pile is the next deal's upcard once the table has been seen empty (or, if the
  empty table was missed, when that card is not the last round's top discard).

When the journal stops explaining the table, the referee says so rather than guess: melds the
journal holds that the table no longer shows are flagged (once each), and so are melds laid where no
deal was seen. A table cleared while the journal's round is unfinished (not ended, or its hands
never fitted the hand sizes) is flagged, and from then on the referee journals nothing and flags every
new deal it sees, until the host has corrected the journal and called `resync`.

A card of the top card's name put onto the pile is a discard when the reader gives it a new track (an
arm reached it and its pixels changed); the card under the top showing again is a take, unless the
seat to act has drawn already or the old top is still seen under it (then it is a discard too).

Every event goes to the journal first (`append_event`, which checks it) and only then to the
referee's engine copy. An event the rules reject, one built from unsure readings (low confidence,
cards laid in a zone whose melds lost cards: one misread meld card), or cards that nothing explains are flagged
(`journal.flag`) with the reason and a JPEG of the part of the frame that caused it; those cards are
then set aside so the next snapshots follow the game without flagging them again (a set-aside card is
known by its track or its place: another card of its name laid elsewhere is a move); moves elsewhere
(the next discards, other seats' melds) go on being journaled. Cards laid in a zone whose melds lost
cards wait while the turn lasts, in case the meld reads right again; they are flagged when it ends.

Before a snapshot is compared, the game reads it again (rereading.py): a meld's card read as another
whose next readings name a card the meld misses is taken as that card, and faint readings (under
`faint_below`) are dropped but for a meld's own cards. An open, a lay-off or the spread hands the engine
refuses as read are tried with faint readings added (opens and hands) or with cards renamed to next
readings; what is taken that way is flagged for the host.

Restart: a `Referee` built on a journal that already holds a game takes the game from it, so the
engine state is the one an uninterrupted run would have.
"""

from __future__ import annotations

import copy
import os
import tempfile
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Protocol

import cv2
import numpy as np

from ..rules.cards import Card
from ..rules.engine import Game, IllegalMove
from ..rules.events import Deal, Discard, Draw, Event, GameStart, LayOff, Open, RoundEnd
from ..rules.melds import Meld, position_rank
from ..vision.pairing import normalise_orientation
from ..vision.table_reading import MISREAD_CORNER_BELOW, SeenCard, SeenMeld, TableSnapshot
from .claims import DEFAULT_LENGTH_S, ClaimDesk, _claimable
from .rereading import (
    accepted,
    best_row,
    describe,
    faint_in,
    renamed,
    repair,
    reread_melds,
    row_beyond,
    with_faint,
    without_faint,
)

MISREAD_NEW_NAME_BELOW = 0.8  # a lone pile corner of a new name read below this may be a covered card's


class JournalLike(Protocol):
    @property
    def game(self) -> Game | None: ...

    def append_event(self, ev: Event, source: str | None = None) -> int: ...

    def replace(self, target: int, ev: Event, source: str | None = ...) -> int: ...

    def flag(
        self, ev: Event | None, reason: str, image: str | os.PathLike[str] | None = None, source: str | None = ...
    ) -> int: ...


class RefereeError(ValueError):
    """The referee cannot follow this journal: another game's seats or profile."""


@dataclass(frozen=True)
class FlagNote:
    seq: int
    event: Event | None
    reason: str
    picture: str | None


def _seen_counter(cards: list[SeenCard]) -> Counter[str]:
    return Counter(c.card for c in cards)


class Referee:
    """Turns snapshots and button presses into journaled events (see the module doc)."""

    def __init__(
        self,
        journal: JournalLike,
        start: GameStart,
        first_dealer: str,
        claims: ClaimDesk | None = None,
        min_confidence: float = 0.5,
        pictures_dir: str | os.PathLike[str] | None = None,
        claim_window_s: float = DEFAULT_LENGTH_S,
        faint_below: float = 0.0,
    ) -> None:
        """`min_confidence`: a move read from a card below it is flagged as unsure. `faint_below`: a
        card read below it is a faint reading, no card but where the rules settle it (see rereading.py;
        for a recogniser that passes on readings under its own threshold)."""
        if first_dealer not in start.seats:
            raise RefereeError(f"the first dealer {first_dealer!r} is not one of the seats {', '.join(start.seats)}")
        self.journal = journal
        self.first_dealer = first_dealer
        self.min_confidence = min_confidence
        self.faint_below = faint_below
        game = journal.game
        if game is None:
            journal.append_event(start, source="tablet")
            game = journal.game
            assert game is not None
            self._reopen = False
        elif game.seats != start.seats or game.profile.name != start.profile:
            raise RefereeError(
                f"the journal holds a {game.profile.name} game of {', '.join(game.seats)}, "
                f"not this {start.profile} game of {', '.join(start.seats)}"
            )
        else:
            # a restart: the claim window (in memory) on the journal's top discard died with the old
            # process; it is opened again at the first snapshot or press (`_reopen_window`)
            self._reopen = True
        self.game: Game = game
        self.seats: tuple[str, ...] = start.seats
        self.claims = claims if claims is not None else ClaimDesk(self.game, length_s=claim_window_s)
        self.claims.set_game(self.game)
        if pictures_dir is None:
            jpath = getattr(journal, "path", None)
            pictures_dir = Path(jpath).with_suffix(".pictures") if jpath is not None else tempfile.mkdtemp()
        self.pictures_dir = Path(pictures_dir)
        self.flags: list[FlagNote] = []
        self.last_picture: bytes | None = None
        self.cleared = False  # the table was seen empty since the last round ended
        self._full: TableSnapshot | None = None  # the last snapshot with its faint readings
        # flagged cards set aside, per zone, as last seen: a set-aside card is the same one while it
        # keeps its track or its place; another card of that name laid elsewhere is a move
        self.ignored: dict[str, list[SeenCard]] = {}
        self.ignored_top: tuple[str, int] | None = None
        self.deferred: tuple[TableSnapshot, float] | None = None
        self.last: TableSnapshot | None = None
        self._prev_top: SeenCard | None = None
        self._pile_at_last: tuple[str, ...] = ()
        self._was_empty = True  # the last snapshot showed no card at all
        self.lost = False  # the table was cleared before the journal's round ended: wait for the host
        self._old_top_track: int | None = None  # the discard top when the last round ended
        self._noted: set[str] = set()  # state mismatches flagged already (each once until the next deal)
        self._top_at: dict[int, SeenCard] = {}  # how each card of the pile (by index) lay when it was on top
        # the card the last take lifted off the pile: its place in the pile, and how it lay on top
        self._lifted: tuple[int, SeenCard] | None = None
        # the card to take for the reader's top while it shows: (that card's track, the top's track, and a
        # name for it where the rules renamed it); a card thrown on the top, or the top itself renamed
        self._thrown: tuple[int, int, str | None] | None = None
        self._last_commit: tuple[int, Event] | None = None  # the seq and event the referee wrote last

    # ----- journaling ------------------------------------------------------------------
    def _commit(self, ev: Event, source: str, now: float, snap: TableSnapshot | None, region: list[SeenCard]) -> bool:
        try:
            seq = self.journal.append_event(ev, source=source)
        except IllegalMove as e:
            self._flag(ev, f"the rules refuse it: {e}", snap, region, source)
            return False
        self._last_commit = (seq, ev)
        self.game.apply(ev)  # journaled first; the journal checked it against the same game
        self.claims.on_event(ev, now)
        if isinstance(ev, Deal):
            # the upcard may be taken or bought like a discard; nobody discarded it, so the dealer may claim too
            self.claims.on_buy(now)
        return True

    def _flag(
        self, ev: Event | None, reason: str, snap: TableSnapshot | None, region: list[SeenCard], source: str = "camera"
    ) -> None:
        picture = self._picture(snap, region)
        path: str | None = None
        if picture is not None:
            self.pictures_dir.mkdir(parents=True, exist_ok=True)
            p = self.pictures_dir / f"flag-{len(self.flags) + 1:04d}-{snap.frame_no if snap else 0}.jpg"
            p.write_bytes(picture)
            path = str(p)
        seq = self.journal.flag(ev, reason, image=path, source=source)
        self.flags.append(FlagNote(seq, ev, reason, path))

    def _picture(self, snap: TableSnapshot | None, region: list[SeenCard]) -> bytes | None:
        if snap is None or snap.image is None:
            return None
        img = snap.image
        h, w = img.shape[:2]
        if region:
            pad = 0.06 * max(w, h)
            x1 = int(max(0, min(c.box[0] for c in region) - pad))
            y1 = int(max(0, min(c.box[1] for c in region) - pad))
            x2 = int(min(w, max(c.box[2] for c in region) + pad))
            y2 = int(min(h, max(c.box[3] for c in region) + pad))
            if x2 > x1 and y2 > y1:
                img = img[y1:y2, x1:x2]
        ok, buf = cv2.imencode(".jpg", np.ascontiguousarray(img), [cv2.IMWRITE_JPEG_QUALITY, 85])
        self.last_picture = bytes(buf.tobytes()) if ok else None
        return self.last_picture

    def resync(self) -> None:
        """Follow the journal again after the host confirmed, dismissed or corrected something."""
        game = self.journal.game
        if game is not None:
            self.game = game
            self.claims.set_game(game)
        self.ignored.clear()
        self.ignored_top = None
        self._thrown = None
        self._last_commit = None
        self._noted.clear()
        if self.lost:
            self.lost = False
            self.cleared = True  # the host corrected the journal: the next deal is followed
        if self.last is not None and self.game.round is not None and self.game.expected_round() is None:
            self._set_aside_all(self.last)

    # ----- buttons and time ------------------------------------------------------------
    def _reopen_window(self, now: float) -> None:
        """After a restart: a discard (or an upcard, or a card a buy exposed) that can still be claimed
        gets a full window again, as if just put down; claims made before the restart are lost."""
        self._reopen = False
        r = self.game.round
        if r is None or self.claims.window is not None or _claimable(self.game) is None:
            return
        just_dealt = len(r.pile) == 1 and not r.table and all(n == r.contract.dealt for n in r.counts.values())
        if r.last_buyer is not None or just_dealt:
            self.claims.on_buy(now)  # no discarder to pass over (as `_commit` does after a buy or a deal)
        else:
            self.claims.on_discard(now)

    def on_press(self, seat: str, now: float, long: bool = False) -> None:
        if self._reopen:
            self._reopen_window(now)
        if seat not in self.seats:
            return
        if long:
            r = self.game.round
            if r is not None and self.last is not None and self._draw_ends_round():
                # the seat to act drew the stock's last card (unseen) and that ended the round
                self._commit(Draw(r.turn, "stock", source="camera"), "camera", now, self.last, [])
                r = self.game.round
            # (a game just completed expects no deal either: its last round is scored already)
            g = self.game
            if r is not None and r.over and not g.complete and g.expected_round() is None and self.last is not None:
                self._round_end(self.last, now, forced=True)
            return
        self.claims.on_press(seat, now)
        self.tick(now)

    def tick(self, now: float) -> None:
        d = self.claims.poll(now)
        if d is not None and d.granted:
            ev = d.event()
            if ev is not None:
                self._commit(ev, "button", now, self.last, [])
        if self.deferred is not None:
            w = self.claims.window
            if w is None or w.decided or now >= w.closes_at:
                snap, _ = self.deferred
                self.deferred = None
                self._process(snap, now)

    # ----- snapshots -------------------------------------------------------------------
    def on_snapshot(self, snap: TableSnapshot, now: float) -> None:
        if self._reopen:
            # at the first steady view of the table (or the first press), not at a clock tick: the window
            # then opens when the discard is seen lying there, as it did before the restart
            self._reopen_window(now)
        self.tick(now)
        self.deferred = None
        self._process(snap, now)

    def _process(self, snap: TableSnapshot, now: float) -> None:
        g = self.game
        snap = self._thrown_top(self._reread(snap))
        try:
            if g.complete:
                return
            r = g.round
            if self.lost:
                self._while_lost(snap)
                return
            if snap.empty() and not self._was_empty and r is not None and g.expected_round() is None:
                if r.over or r.table or len(r.pile) > 1:  # (a lone upcard may have been taken)
                    # the table was cleared but the journal's round is not finished: the referee has
                    # lost the game (a missed or misread move); until the host corrects the journal
                    # (then `resync`), every new deal is flagged and nothing is journaled
                    what = "has not ended" if not r.over else "was never scored (the spread hands did not fit)"
                    self._flag(None, f"the table was cleared but round {r.number} {what} in the journal", snap, [])
                    self.lost = True
                    self.cleared = True
                    return
            if r is None or g.expected_round() is not None:
                self._await_deal(snap, now)
            elif r.over:
                self._round_end(snap, now, forced=False)
            else:
                self._play(snap, now)
        finally:
            self.last = snap
            self._prev_top = snap.discard_top
            self._was_empty = snap.empty()
            r = self.game.round
            self._pile_at_last = tuple(r.pile) if r is not None else ()
            if r is None or not r.pile:
                self._top_at.clear()
                self._lifted = None
            else:
                if len(r.pile) in self._top_at:
                    self._lifted = (len(r.pile), self._top_at[len(r.pile)])
                for k in [k for k in self._top_at if k >= len(r.pile)]:
                    del self._top_at[k]
                top = snap.discard_top
                if top is not None and top.card == r.pile[-1] and self.ignored_top != (top.card, top.track):
                    self._top_at[len(r.pile) - 1] = top

    def _while_lost(self, snap: TableSnapshot) -> None:
        if snap.empty():
            self.cleared = True
            return
        if self.cleared and not self._seat_zone_cards(snap) and len(snap.discard) == 1:
            self.cleared = False
            r = self.game.round
            number = r.number if r is not None else "?"
            self._flag(
                None,
                f"a new deal (upcard {snap.discard[0].card}) but round {number} is unfinished in the journal: "
                "the referee follows again once the host has corrected it",
                snap,
                list(snap.discard),
            )

    def _note(self, key: str, reason: str, snap: TableSnapshot, region: list[SeenCard]) -> None:
        """Flag a state the journal cannot explain, once (until the next deal)."""
        if key in self._noted:
            return
        self._noted.add(key)
        self._flag(None, reason, snap, region)

    def _seat_zone_cards(self, snap: TableSnapshot) -> list[SeenCard]:
        return [c for melds in snap.seats for m in melds for c in m.cards]

    def _await_deal(self, snap: TableSnapshot, now: float) -> None:
        seat_cards = self._seat_zone_cards(snap)
        if not seat_cards and not snap.discard:
            self.cleared = True
            return
        first = self.game.round is None
        due = self.game.expected_round()
        if seat_cards and (self.cleared or first):
            # melds of a round whose deal was never seen: nothing of it can be followed
            self._note(
                f"no-deal:{due}",
                f"cards are laid in the seats' zones but no deal of round {due} was seen: " + _list(seat_cards),
                snap,
                seat_cards,
            )
            return
        top = snap.discard_top
        if seat_cards or top is None:
            return
        # the upcard: a lone card after the table was seen empty, or (the empty table missed) a lone
        # card that is not the last round's discard top
        lone_new = len(snap.discard) == 1 and top.track != self._old_top_track
        if not (self.cleared or first or lone_new):
            return
        assert due is not None
        dealer = self.game.expected_dealer() or self.first_dealer
        ev = Deal(due, dealer, Card(top.card), source="camera")
        if top.confidence < self.min_confidence:
            self._flag(ev, f"unsure reading of the upcard {top.card} ({top.confidence:.2f})", snap, [top])
            return
        if self._commit(ev, "camera", now, snap, [top]):
            self.cleared = False
            self.ignored.clear()
            self.ignored_top = None
            self._noted.clear()

    # ----- round end -------------------------------------------------------------------
    def _spreads(self, snap: TableSnapshot) -> dict[str, list[SeenCard]]:
        r = self.game.round
        assert r is not None
        out: dict[str, list[SeenCard]] = {}
        for i, s in enumerate(self.seats):
            if s not in r.players or i >= len(snap.seats):
                continue
            laid: Counter[str] = Counter()
            for m in r.table:
                if m.owner == s:
                    laid.update(m.cards)
            spread = []
            for meld in snap.seats[i]:
                for c in meld.cards:
                    if laid[c.card] > 0:
                        laid[c.card] -= 1
                    else:
                        spread.append(c)
            out[s] = spread
        return out

    def _spreads_by_rows(self, snap: TableSnapshot) -> dict[str, list[SeenCard]]:
        """The spread hands from the layout: each seat's rows that are none of its melds, and what its
        meld rows show beyond their melds, except where a meld misses at least as many cards as its row
        shows beyond it: those are its own cards misread (a 5C read 5S), not cards of the hand."""
        r = self.game.round
        assert r is not None
        matched, new_rows, _, _ = self._match(snap)
        out: dict[str, list[SeenCard]] = {s: [] for s in self.seats if s in r.players}
        for k, (row, extra) in matched.items():
            owner = r.table[k].owner
            missing = Counter(str(c) for c in r.table[k].cards) - Counter(row.names)
            if owner in out and len(extra) > sum(missing.values()):
                out[owner].extend(extra)
        for i, row in new_rows:
            if i < len(self.seats) and self.seats[i] in out:
                out[self.seats[i]].extend(row.cards)
        return out

    def _fitting_spreads(self, snap: TableSnapshot) -> tuple[dict[str, list[SeenCard]], bool]:
        """The spread hands, and whether they fit the hand sizes: as read, else by rows."""
        r = self.game.round
        assert r is not None
        spreads = self._spreads(snap)
        if all(len(spreads.get(s, [])) == r.counts[s] for s in r.players):
            return spreads, True
        by_rows = self._spreads_by_rows(snap)
        if all(len(by_rows.get(s, [])) == r.counts[s] for s in r.players):
            return by_rows, True
        return spreads, False

    def _round_end(self, snap: TableSnapshot, now: float, forced: bool) -> None:
        r = self.game.round
        assert r is not None
        spreads, complete = self._fitting_spreads(snap)
        settled: list[SeenCard] = []
        if not complete and self._full is not None and self._full is not snap:
            # hands short by cards read faintly: the hand sizes settle them
            spreads_full, complete = self._fitting_spreads(self._full)
            if complete:
                spreads = spreads_full
                settled = [c for cs in spreads.values() for c in cs if c.confidence < self.faint_below]
                self._flag(None, "read faintly to fill the hand sizes: " + _list(settled), snap, settled)
        if not complete and not forced:
            return  # hands are still being spread
        order = [(s, c) for s in r.players for c in spreads.get(s, [])]
        cards = [c for _, c in order]

        def round_end(names: list[str]) -> Event:
            hands = {s: [Card(n) for (seat, _), n in zip(order, names) if seat == s] for s in r.players}
            return RoundEnd({s: tuple(sorted(h)) for s, h in hands.items()}, source="camera")

        ev = round_end([c.card for c in cards])
        unsure = [c for c in cards if c.confidence < self.min_confidence and not any(c is k for k in settled)]
        if unsure:
            self._flag(ev, "unsure reading of spread hands: " + _list(unsure), snap, unsure)
        elif not complete:
            short = [f"{s} shows {len(spreads.get(s, []))} of {r.counts[s]}" for s in r.players]
            self._flag(ev, "the spread hands do not match the hand sizes: " + ", ".join(short), snap, cards)
        else:
            if not accepted(self.game, ev):
                ev = self._repaired(ev, cards, snap, round_end)[0]
            if self._commit(ev, "camera", now, snap, cards):
                self._old_top_track = snap.discard_top.track if snap.discard_top is not None else None

    # ----- play ------------------------------------------------------------------------
    def _set_aside_all(self, snap: TableSnapshot) -> None:
        """Everything unexplained in `snap` is set aside (after a flag or a resync)."""
        _, _, extras, _ = self._match(snap)
        for zone, cards in extras.items():
            self.ignored.setdefault(zone, []).extend(cards)

    def _match(
        self, snap: TableSnapshot
    ) -> tuple[
        dict[int, tuple[SeenMeld, list[SeenCard]]],
        list[tuple[int, SeenMeld]],
        dict[str, list[SeenCard]],
        list[tuple[str, str, int, bool]],
    ]:
        """Engine melds matched to the rows of their owner's zone.

        Returns (meld index -> (row, cards the row has beyond the meld; a run's beyond its ends)), rows
        matching no meld (zone index, row), every unexplained card per zone (ignored ones left out), and
        the melds that lost cards (a misreading), as (zone, what it no longer shows, meld index, whether
        no row shows it at all).
        """
        r = self.game.round
        assert r is not None
        matched: dict[int, tuple[SeenMeld, list[SeenCard]]] = {}
        unlaid: list[tuple[int, SeenCard]] = []  # readings inside a run's row: no lay-off, unexplained
        used: set[tuple[int, int]] = set()
        lost: list[tuple[str, str, int, bool]] = []
        for k, m in enumerate(r.table):
            zone = self.seats.index(m.owner) if m.owner in self.seats else -1
            if zone < 0 or zone >= len(snap.seats):
                continue
            j = best_row(m, snap.seats[zone], {b for a, b in used if a == zone})
            if j is None:
                lost.append((f"seat:{zone}", f"meld {k} ({' '.join(m.cards)})", k, True))
                continue
            row = snap.seats[zone][j]
            used.add((zone, j))
            rest, beyond = row_beyond(m, row)
            inside: set[int] = set()
            held = [i for i in range(len(row.cards)) if i not in beyond]
            if m.kind == "run" and held:
                # a run grows at its ends only (jokers never move, petras §04): a new reading between
                # its cards is a mark of one of them misread (an AC 0.51 between a run's JK and 6S); a
                # name the meld holds too may be its card, the one at the end the new one (a JK laid
                # below a run's JK, petras film 2002 round 6)
                names = {row.cards[i].card for i in held}
                inside = {i for i in beyond if held[0] < i < held[-1] and row.cards[i].card not in names}
            extra = [row.cards[i] for i in beyond if i not in inside]
            if +rest:
                gone = " ".join(sorted(rest.elements()))
                lost.append((f"seat:{zone}", f"meld {k} ({' '.join(m.cards)}) no longer shows {gone}", k, False))
            matched[k] = (row, extra)
            unlaid.extend((zone, row.cards[i]) for i in sorted(inside))
        new_rows = [(i, row) for i, rows in enumerate(snap.seats) for j, row in enumerate(rows) if (i, j) not in used]
        extras: dict[str, list[SeenCard]] = {}
        for k, (_row, extra) in matched.items():
            owner_zone = self.seats.index(r.table[k].owner)
            extras.setdefault(f"seat:{owner_zone}", []).extend(extra)
        for zone, c in unlaid:
            extras.setdefault(f"seat:{zone}", []).append(c)
        for i, row in new_rows:
            extras.setdefault(f"seat:{i}", []).extend(row.cards)
        if snap.stray:
            extras.setdefault("stray", []).extend(snap.stray)
        for zname, cards in list(extras.items()):
            extras[zname] = self._not_set_aside(zname, cards)
        return matched, new_rows, extras, lost

    def _not_set_aside(self, zone: str, cards: list[SeenCard]) -> list[SeenCard]:
        """The cards of `zone` that were not set aside after a flag. A set-aside card seen again (same
        name, and same track or place) stays aside and is followed to where it is seen now."""
        aside = self.ignored.get(zone)
        if not aside:
            return list(cards)
        free = list(range(len(aside)))
        keep = []
        for c in cards:
            k = next((i for i in free if _same_place(c, aside[i])), None)
            if k is None:
                keep.append(c)
            else:
                free.remove(k)
                aside[k] = c
        return keep

    def _thrown_top(self, snap: TableSnapshot) -> TableSnapshot:
        """The snapshot with the pile's top set to a card thrown on it where the reader took the top,
        changed under the throw, for another card of its name.

        A card thrown on the top changes the top's pixels: the reader gives it a new track, as it does
        for a card of that name put there, and takes a sure lone corner that appeared with it for a
        card under the pile (as the cards a take uncovers are). With the journal's pile unchanged since
        the last snapshot (no take), a sure corner of another name, newer than the top was (or the card
        the last take lifted off, lying where it lay: `_thrown_back`), is the card thrown (a JS on a KD,
        classic film 2000 round 3; a 5C on a 4C, petras film 2000 round 4), or a
        fairly sure one where the top lies where and as it lay; it stays the top while the reader shows
        the covered card as top."""
        r = self.game.round
        top = snap.discard_top
        if r is None or r.over or not r.pile or top is None:
            self._thrown = None
            return snap
        if self._thrown is not None:
            track, top_track, name = self._thrown
            thrown = next((c for c in self._with_faint(snap.discard) if c.track == track), None)
            if thrown is not None and top.track == top_track:
                thrown = renamed(thrown, name) if name is not None else thrown
                shown = any(c.track == track for c in snap.discard)
                discard = (
                    tuple(thrown if c.track == track else c for c in snap.discard) if shown else (*snap.discard, thrown)
                )
                return replace(snap, discard=discard, discard_top=thrown)
            self._thrown = None
        prev = self._prev_top
        if prev is None or top.card != r.pile[-1] or not self._top_retracked(top):
            return snap
        # the top lying where and as it lay (seen by both corners: a lone corner does not tell its turn,
        # an AC thrown on an AC, petras film 2002 round 2) is the same card, so something was thrown on
        # it: then a less sure corner is that card too, though not a joker's (the reading of a mark
        # the model cannot place; a 6H's index read 0.87 beside stacked indices read JK 0.78, petras
        # film 2000 round 6)
        turned = prev.orientation is not None and top.orientation is not None
        if turned and not _same_spot(prev, top):
            # the top lies elsewhere or turned otherwise: another card of its name was thrown, and a
            # corner that came new with it is a covered card's index seen anew (a QD beside a second
            # QH thrown on a QH, petras film 2001 round 5)
            return snap
        # so is a top seen by both corners before and now by one, at the index it led with: the card
        # thrown on it covers the other (a 10S 0.61 beside a KH's index, classic film 2001 round 7)
        still = turned or (prev.orientation is not None and top.corners < 2 and _same_index(prev, top))

        def thrown_like(c: SeenCard) -> bool:
            if c.confidence >= MISREAD_CORNER_BELOW:
                return True
            # nor the name of a card the pile holds: that is a covered card's index seen again (a 9D
            # 0.55 beside a second AC thrown on the AC over it, petras film 2002 round 2)
            return still and c.card != "JK" and c.card not in r.pile and c.confidence >= self.min_confidence

        # a corner read where one of its name lay in the last snapshot is that index again, its pixels
        # changed by the throw (a QH's index beside an 8C thrown on an 8C 3 degrees from where it lay,
        # classic film 1001 round 7)
        before = self.last.discard if self.last is not None else ()
        new = [
            c
            for c in snap.discard
            if c.card != top.card
            and c.corners < 2
            and thrown_like(c)
            and (c.track > prev.track or self._thrown_back(c))
            and not any(_centre_in(c, b) and b.card == c.card for b in before)
        ]
        if not new:
            return snap
        thrown = max(new, key=lambda c: (c.confidence, c.track))
        self._thrown = (thrown.track, top.track, None)
        return replace(snap, discard_top=thrown)

    def _thrown_back(self, c: SeenCard) -> bool:
        """Whether `c` is the card the last take lifted off the pile, lying again where it lay with
        nothing thrown since: the taker threw it back, and the reader gave it its track from before,
        older than the top's (a 3D taken by button and thrown back on the 4H, petras film 1002 round 7)."""
        r = self.game.round
        return (
            r is not None
            and self._lifted is not None
            and self._lifted[0] == len(r.pile)
            and _same_place(c, self._lifted[1])
        )

    def _with_faint(self, discard: tuple[SeenCard, ...]) -> tuple[SeenCard, ...]:
        """The pile's cards as read with its faint readings (the last snapshot's, when it is this one)."""
        full = self._full.discard if self._full is not None else ()
        return (*discard, *(c for c in full if not any(k.track == c.track for k in discard)))

    def _top_retracked(self, top: SeenCard) -> bool:
        """Whether the top reads the name the last snapshot's top did on another track (the reader gives
        a card an arm replaced, or whose pixels a throw changed, a new track), with no button event
        having changed the pile since (a take reveals a card too)."""
        prev = self._prev_top
        r = self.game.round
        return (
            prev is not None
            and r is not None
            and prev.card == top.card
            and prev.track != top.track
            and not self._pile_changed_since_last()
        )

    def _pile_changed_since_last(self) -> bool:
        """Whether a button event (a take, a buy) changed the pile since the last snapshot."""
        r = self.game.round
        return r is not None and tuple(r.pile) != self._pile_at_last

    def _pile_change(self, snap: TableSnapshot) -> str:
        r = self.game.round
        assert r is not None
        pile = r.pile
        top = snap.discard_top
        if top is None:
            return "taken" if len(pile) == 1 and not snap.discard else "same"
        if self.ignored_top == (top.card, top.track):
            return "same"
        agreed = sum(c.card == top.card for c in snap.discard) >= 2  # both its corners read it, unpaired
        thrown = self._thrown is not None and self._thrown[0] == top.track  # taken for thrown on the top
        if (
            pile
            and not thrown
            and top.card not in pile[-2:]
            and (top.corners < 2 or top.card == "JK")
            and top.confidence < MISREAD_CORNER_BELOW
            and not agreed
        ):
            # a new name on top, read unsure by one corner only: a card thrown on the pile lies
            # uncovered and shows both, so this is more likely a covered card read anew; so is an
            # unsure joker's pair (the marks of a face read as a JK pair, 0.59: petras film 2000 round 2)
            def seen(k: int, s: TableSnapshot | None) -> bool:
                held = self._top_at.get(k)
                return s is not None and held is not None and any(_same_place(c, held) for c in s.discard)

            # a covered card's index read anew comes out a joker (the reading of a mark the model
            # cannot place), a card deeper in the pile, or unsure (a 3D 0.72); a new name read fairly
            # sure (a 3H 0.88) beside a top that still shows is a discard whose other index was missed
            misread_like = top.card == "JK" or top.card in pile or top.confidence < MISREAD_NEW_NAME_BELOW
            if misread_like and seen(len(pile) - 1, snap):
                return "same"  # the journal's top still lies where it was: nothing covers it
            if len(pile) >= 2 and not r.drawn and seen(len(pile) - 2, snap) and not seen(len(pile) - 2, self.last):
                return "taken"  # the top went, and the card under it shows again where it lay on top
        if pile and top.card == pile[-1]:
            # the same name on top, but another card: a discard onto an identical card
            if not self._top_retracked(top):
                return "same"
            return "ambiguous" if len(pile) >= 2 and pile[-2] == top.card and not r.drawn else "new"
        if len(pile) >= 2 and top.card == pile[-2]:
            held = self._top_at.get(len(pile) - 1)
            covered = top.corners < 2 and held is not None and top.track < held.track
            if covered and any(c.card == pile[-1] for c in snap.discard):
                # the card under the top, by one corner on the reader's track from before the top came,
                # and the top still read: the top was thrown on it, covering part of it, and is still
                # there (a KH's index beside the 10S thrown on it, classic film 2001 round 7); a card
                # read whole is thrown on the top (a QC taken and thrown back on the 4D it lay on,
                # keeping its track, petras film 2000 round 5)
                return "same"
            # the card under the old top shows again: a take, unless the seat to act has drawn already
            # (then it discarded a card of that name) or the old top is still seen under it
            prev = self._prev_top
            under = prev is not None and any(c is not top and _same_place(c, prev) for c in snap.discard)
            # a take shows the card under it where it lay when it was on top; another card of its name
            # lands elsewhere
            before = self._top_at.get(len(pile) - 2)
            elsewhere = before is not None and before.track != top.track and not _same_spot(before, top)
            if r.drawn and self._uncovered(top, snap):
                return "same"
            return "new" if r.drawn or under or elsewhere else "taken"
        return "new"

    def _uncovered(self, top: SeenCard, snap: TableSnapshot) -> bool:
        """Whether `top`, named like the card under the journal's top, is that card showing more than it
        did: the last snapshot read one corner of its name inside where it reads now, and the journal's
        top is still read where it lay. A take by button uncovers it (an arm changed its pixels: a new
        track), and the seat that took the top has thrown nothing yet (a 4C under the 4H under a 10C
        taken, classic film 2000 round 7). Only just after such a take: a card thrown on an identical
        one covers that one's lone corner too (a QC thrown on the 4D lying on a QC, petras film 2000
        round 5)."""
        r = self.game.round
        assert r is not None
        held = self._top_at.get(len(r.pile) - 1)
        last = self.last
        if (
            not self._pile_changed_since_last()
            or held is None
            or last is None
            or not any(c is not top and _same_place(c, held) for c in snap.discard)
        ):
            return False
        return any(
            c.card == top.card and c.corners < 2 and c is not last.discard_top and _centre_in(c, top)
            for c in last.discard
        )

    def _play(self, snap: TableSnapshot, now: float) -> None:
        r = self.game.round
        assert r is not None
        turn = r.turn
        pile = self._pile_change(snap)
        matched, new_rows, extras, lost = self._match(snap)
        if pile == "taken":
            w = self.claims.window
            if w is not None and not w.decided and w.claimants() and not w.stale():
                # someone claimed it: the button decides whether this is a buy
                self.deferred = (snap, now)
                return
        if pile == "same" and any(extras.values()) and self._draw_ends_round():
            # cards appear with no discard, and drawing the stock's last card ends this round: the
            # seat to act drew it (unseen) and the hands are being spread
            if self._commit(Draw(turn, "stock", source="camera"), "camera", now, snap, []):
                self._round_end(snap, now, forced=False)
                return
        zone_turn = f"seat:{self.seats.index(turn)}"
        plan: list[tuple[Event, list[SeenCard]]] = []
        late_rows: dict[int, tuple[str, ...]] = {}  # melds of the turn's open seen with cards read late
        late_cards: list[SeenCard] = []
        unexplained: list[SeenCard] = []
        settled: set[int] = set()  # tracks of faint readings the rules need (not unsure)
        faint_rows: dict[int, list[SeenMeld]] = {}  # an open's rows with their faint readings
        if turn not in r.opened:
            rows = [row for i, row in new_rows if f"seat:{i}" == zone_turn]
            # rows set aside after a refused open are laid again with any row that reads anew: the
            # engine then checks the whole contract (one misread card must not cost the open)
            if rows and self._not_set_aside(zone_turn, [c for row in rows for c in row.cards]):
                opening = Open(turn, tuple(tuple(row.names) for row in rows), source="camera")
                if self._full is not None:
                    faint_rows[id(opening)] = faint_in(rows, self._full, self.faint_below)
                plan.append((opening, [c for row in rows for c in row.cards]))
                taken = Counter(c.card for row in rows for c in row.cards)
                extras[zone_turn] = _minus(extras.get(zone_turn, []), taken)
        for k, (row, extra) in sorted(matched.items()):
            zone = f"seat:{self.seats.index(r.table[k].owner)}"
            allowed = Counter(c.card for c in extras.get(zone, []))
            add = []
            for c in extra:
                if allowed[c.card] > 0:  # not set aside after an earlier flag
                    allowed[c.card] -= 1
                    add.append(c)
            if not add:
                continue
            if self._read_late(turn, k, row, add):
                late_rows[k] = tuple(row.names)
                late_cards.extend(add)
            else:
                plan.append((LayOff(turn, k, _layoff_cards(r.table[k], row, add), source="camera"), add))
            extras[zone] = _minus(extras.get(zone, []), Counter(c.card for c in add))
        for cards in extras.values():
            unexplained.extend(cards)
        if pile == "ambiguous":
            top = snap.discard_top
            assert top is not None
            self._flag(
                Discard(turn, Card(top.card), source="camera"),
                f"unsure: {top.card} on {top.card}: a take of the top card or a discard of another {top.card}",
                snap,
                [top],
            )
            self.ignored_top = (top.card, top.track)
        if pile == "new":
            top = snap.discard_top
            assert top is not None
            plan.append((Discard(turn, Card(top.card), source="camera"), [top]))
        lost_text = "; ".join(what for _, what, _, _ in lost)
        doubtful = [p for p in plan if _doubtful(p[0], self._meld_zone(p[0]), lost)]
        if doubtful:
            # cards appear in a zone whose melds lost cards: likely a misreading, not a move; the other
            # moves (a discard, another seat's melds) go on. While the turn lasts they are planned again
            # at each snapshot (the meld may read right again); when it ends they are flagged and set
            # aside, else a later seat would be given them
            if pile == "new":
                for planned, cards in doubtful:
                    self._flag(planned, "unsure reading: " + lost_text, snap, cards)
                    self._set_aside(planned, cards, snap)
                self._noted.add("lost:" + lost_text)  # said with these flags
            plan = [p for p in plan if not any(p is d for d in doubtful)]
        needs_draw = not r.drawn and (plan or pile == "taken")
        pre: list[tuple[Event, list[SeenCard]]] = []
        if needs_draw:
            if pile == "taken":
                take = Draw(turn, "discard", source="camera")
                refused = self._refused_claim(r.pile[-1])
                if refused:
                    # someone pressed for this card and was refused, and the card went anyway
                    self._flag(take, f"unsure who took {r.pile[-1]}: {refused}", snap, [])
                    if plan:
                        self._after_flags(snap)
                    return
                pre.append((take, [snap.discard_top] if snap.discard_top else []))
            else:
                d = self.claims.decline(now)  # the player to act drew from the stock: decide claims first
                if d is not None and d.granted:
                    bought = d.event()
                    if bought is not None:
                        self._commit(bought, "button", now, snap, [])
                pre.append((Draw(turn, "stock", source="camera"), []))
        elif pile == "taken":
            unexplained.extend([snap.discard_top] if snap.discard_top else [])
        if lost:
            # melds the journal holds that the table no longer shows: a misreading, or the journal
            # has lost the game; either way the host must look
            region = [c for rows in snap.seats for row in rows for c in row.cards]
            self._note("lost:" + lost_text, "the table no longer shows " + lost_text, snap, region)
        if late_rows:
            self._amend_open(late_rows, late_cards, snap)
        for ev, cards in pre + plan:
            if self._held_unsure(ev, cards, snap, settled):
                continue
            read_as = cards
            if isinstance(ev, (Open, LayOff)) and not accepted(self.game, ev):
                completed = self._completed(ev, cards, faint_rows[id(ev)], snap) if id(ev) in faint_rows else None
                if completed is not None:
                    ev, cards = completed
                    settled.update(c.track for c in cards if c.confidence < self.faint_below)
                else:
                    ev, cards = self._repaired(ev, cards, snap)
            elif isinstance(ev, Discard) and not accepted(self.game, ev):
                ev, cards = self._thrown_instead(ev, cards, snap)
            if not self._commit(ev, "camera", now, snap, cards):
                self._set_aside(ev, cards, snap)
            elif isinstance(ev, Open) and zone_turn in self.ignored:
                laid = self.ignored[zone_turn]  # laid now: no longer set aside
                self.ignored[zone_turn] = [s for s in laid if not any(_same_place(c, s) for c in [*read_as, *cards])]
        if unexplained:
            self._flag(None, "cards appeared that no move explains: " + _list(unexplained), snap, unexplained)
            self._after_flags(snap)

    def _held_unsure(
        self, ev: Event, cards: list[SeenCard], snap: TableSnapshot, settled: frozenset[int] | set[int] = frozenset()
    ) -> bool:
        """Whether a card of `ev` reads unsure (under `min_confidence`, its track not among `settled`,
        faint readings the rules need): then `ev` is flagged and its cards set aside."""
        unsure = [c for c in cards if c.confidence < self.min_confidence and c.track not in settled]
        if not unsure:
            return False
        self._flag(ev, "unsure reading: " + _list(unsure), snap, cards)
        self._set_aside(ev, cards, snap)
        return True

    def _read_late(self, turn: str, k: int, row: SeenMeld, add: list[SeenCard]) -> bool:
        """Whether the cards `add` that `row` shows beyond meld `k` were laid with `turn`'s open and
        read late: the seat opened this turn, under a profile with no lay-off on the opening turn
        (petras §04), the meld is one of that open's and the referee recorded nothing since (a QS of a
        group QS QH QH QC first read in the next snapshot, petras film 2000 round 4). Else they are a
        lay-off."""
        r = self.game.round
        assert r is not None
        if self.game.profile.layoff_on_opening_turn or r.opened_this_turn != turn or r.table[k].owner != turn:
            return False
        last = self._last_commit[1] if self._last_commit is not None else None
        if not isinstance(last, Open) or last.seat != turn:
            return False
        m = k - (len(r.table) - len(last.melds))  # the open's melds are the last laid
        return 0 <= m < len(last.melds) and Counter(row.names) == Counter(last.melds[m]) + _seen_counter(add)

    def _amend_open(self, rows: dict[int, tuple[str, ...]], cards: list[SeenCard], snap: TableSnapshot) -> None:
        """Record the referee's last event, the turn's open, again with melds `rows` (by table index) as
        seen now (flagged where the rules refuse it, or a card read late reads unsure)."""
        assert self._last_commit is not None and self.game.round is not None
        seq, last = self._last_commit
        assert isinstance(last, Open)
        first = len(self.game.round.table) - len(last.melds)
        opening = replace(last, melds=tuple(rows.get(first + m, meld) for m, meld in enumerate(last.melds)))
        if self._held_unsure(opening, cards, snap):
            return
        try:
            self.journal.replace(seq, opening, source="camera")
        except IllegalMove as e:
            self._flag(opening, f"the rules refuse it: {e}", snap, cards)
            self._set_aside(opening, cards, snap)
            return
        self._last_commit = (seq, opening)
        game = self.journal.game
        assert game is not None
        self.game = game
        self.claims.set_game(game)

    def _reread(self, snap: TableSnapshot) -> TableSnapshot:
        """The snapshot with table melds' cards read as the meld holds them where the recogniser's next
        readings allow it, and without faint readings but a meld's own (see rereading.py); each
        renaming flagged once for the host."""
        r = self.game.round
        melds = r.table if r is not None and not self.lost else []
        zone_of = [self.seats.index(m.owner) if m.owner in self.seats else -1 for m in melds]
        full, renaming, held = reread_melds(snap, melds, zone_of)
        self._full = full
        snap = without_faint(full, self.faint_below, held)
        for card, name in renaming:
            self._note(
                f"reread:{card.card}:{name}",
                f"read {card.card} as {name}: the meld there holds {name} and shows no {name}",
                snap,
                [card],
            )
        return snap

    def _completed(
        self, ev: Event, cards: list[SeenCard], whole: list[SeenMeld], snap: TableSnapshot
    ) -> tuple[Event, list[SeenCard]] | None:
        """A refused open with faint readings of its rows added, one, else all (flagged for the host),
        where the engine then accepts it; else None."""
        assert isinstance(ev, Open)
        for rows, weak in with_faint(whole, self.faint_below):
            opening = replace(ev, melds=tuple(tuple(row.names) for row in rows))
            if accepted(self.game, opening):
                self._flag(None, "read faintly to complete the contract: " + _list(weak), snap, weak)
                return opening, [c for row in rows for c in row.cards]
        return None

    def _repaired(
        self, ev: Event, cards: list[SeenCard], snap: TableSnapshot, build: Callable[[list[str]], Event] | None = None
    ) -> tuple[Event, list[SeenCard]]:
        """For `ev` as the engine refuses it: the likeliest renaming of its cards it accepts (flagged for
        the host), else `ev` as read (to be refused and flagged). `build` writes the event from its cards'
        names; an open or a lay-off (without jokers) is rewritten by itself."""
        jokers = True
        if build is None:
            build, jokers = _builder(ev, cards)
        if build is None:
            return ev, cards
        found = repair(self.game, cards, build, jokers)
        if found is None:
            return ev, cards
        fixed, renaming = found
        names = dict((id(c), name) for c, name in renaming)
        out = [renamed(c, names[id(c)]) if id(c) in names else c for c in cards]
        self._flag(None, f"read {describe(renaming)}: the rules refuse the cards as first read", snap, cards)
        return fixed, out

    def _thrown_instead(self, ev: Discard, cards: list[SeenCard], snap: TableSnapshot) -> tuple[Event, list[SeenCard]]:
        """For a discard of the pile's top the engine refuses (a card of which every copy is in play):
        the top renamed to a next reading, else the surest card (faint ones too) that came new onto the
        pile with it and reads a name the engine takes, flagged for the host either way; else `ev` as
        read. Refused, the discard would be lost and the next one given to the seat that threw it: a 9C
        thrown on the pile had one index read JK 0.87 (the joker in play already), the other 9C 0.49
        (classic film 2000 round 3)."""
        fixed, out = self._repaired(ev, cards, snap, build=lambda names: replace(ev, card=Card(names[0])))
        top, prev = cards[0], self._prev_top
        if fixed is not ev:
            self._thrown = (top.track, top.track, out[0].card)  # the reader goes on naming it as first read
            return fixed, out
        r = self.game.round
        assert r is not None
        new = [
            c
            for c in self._with_faint(snap.discard)
            if c is not top and c.card not in (top.card, *r.pile) and (prev is None or c.track > prev.track)
        ]
        for c in sorted(new, key=lambda c: (-c.confidence, -c.track)):
            thrown = replace(ev, card=Card(c.card))
            if accepted(self.game, thrown):
                self._flag(
                    None,
                    f"read the card thrown as {c.card} ({c.confidence:.2f}), which came with it: "
                    f"the rules refuse {top.card} ({top.confidence:.2f})",
                    snap,
                    [top, c],
                )
                self._thrown = (c.track, top.track, None)  # the reader's top stays this card while it shows
                return thrown, [c]
        return ev, cards

    def _meld_zone(self, ev: Event) -> str | None:
        """The seat zone whose melds `ev` adds to (an open or a lay-off), else None."""
        r = self.game.round
        assert r is not None
        if isinstance(ev, Open):
            return f"seat:{self.seats.index(ev.seat)}"
        if isinstance(ev, LayOff) and r.table[ev.meld].owner in self.seats:
            return f"seat:{self.seats.index(r.table[ev.meld].owner)}"
        return None

    def _draw_ends_round(self) -> bool:
        """Whether the seat to act drawing from the stock now would end the round (its last card)."""
        r = self.game.round
        if r is None or r.over or r.drawn or r.stock_count > 1:
            return False
        trial = copy.deepcopy(self.game, {id(self.game.profile): self.game.profile})  # the profile is shared
        try:
            trial.apply(Draw(r.turn, "stock"))
        except IllegalMove:
            return False
        return trial.round is not None and trial.round.over

    def _refused_claim(self, card: str) -> str:
        """Why the last window on `card` refused its claimants, if it did and granted nothing."""
        if not self.claims.decisions:
            return ""
        d = self.claims.decisions[-1]
        if d.card != card or d.kind != "none" or not d.passed_over:
            return ""
        return "; ".join(why for _, why in d.passed_over)

    def _set_aside(self, ev: Event, cards: list[SeenCard], snap: TableSnapshot) -> None:
        if isinstance(ev, Discard):
            top = snap.discard_top
            if top is not None:
                self.ignored_top = (top.card, top.track)
        elif isinstance(ev, (Open, LayOff)):
            zone = self._zone_of_cards(snap, cards)
            self.ignored.setdefault(zone, []).extend(cards)

    def _after_flags(self, snap: TableSnapshot) -> None:
        self._set_aside_all(snap)
        if snap.discard_top is not None and self.game.round is not None:
            pile = self.game.round.pile
            if not pile or pile[-1] != snap.discard_top.card:
                self.ignored_top = (snap.discard_top.card, snap.discard_top.track)

    def _zone_of_cards(self, snap: TableSnapshot, cards: list[SeenCard]) -> str:
        tracks = {c.track for c in cards}
        for i, rows in enumerate(snap.seats):
            if any(c.track in tracks for row in rows for c in row.cards):
                return f"seat:{i}"
        return "stray"


def _builder(ev: Event, cards: list[SeenCard]) -> tuple[Callable[[list[str]], Event] | None, bool]:
    """How to write an open or a lay-off from its cards' names (and whether jokers may be renamed), when
    it lists exactly the cards as read; (None, False) otherwise."""
    if isinstance(ev, Open) and [c for m in ev.melds for c in m] == [c.card for c in cards]:
        ends = [sum(len(m) for m in ev.melds[: i + 1]) for i in range(len(ev.melds))]

        def open_of(names: list[str]) -> Event:
            return replace(ev, melds=tuple(tuple(names[a:b]) for a, b in zip([0, *ends], ends)))

        return open_of, True
    if isinstance(ev, LayOff) and list(ev.cards) == [c.card for c in cards]:
        return (lambda names: replace(ev, cards=tuple(names))), False
    return None, False


def _list(cards: list[SeenCard]) -> str:
    return ", ".join(f"{c.card} ({c.confidence:.2f})" for c in cards)


def _same_place(a: SeenCard, b: SeenCard) -> bool:
    """Whether `a` is the card `b` was: the same name, the same track or (partly covered since, its box
    shrunk to the corners still showing) its box centre within `b`'s box."""
    if a.card != b.card:
        return False
    return a.track == b.track or _centre_in(a, b)


def _centre_in(a: SeenCard, b: SeenCard) -> bool:
    """Whether the centre of `a`'s box lies within `b`'s box."""
    cx, cy = (a.box[0] + a.box[2]) / 2, (a.box[1] + a.box[3]) / 2
    return b.box[0] <= cx <= b.box[2] and b.box[1] <= cy <= b.box[3]


def _same_spot(a: SeenCard, b: SeenCard, share: float = 0.08, turn_deg: float = 3.0) -> bool:
    """Whether two readings of a card lie in the same place and way round (box and leading index
    within `share` of the card's size, and turned alike within `turn_deg` where both turns are known:
    a card left lying keeps its turn to a degree, one thrown there lands turned by chance)."""
    size = max(a.box[2] - a.box[0], a.box[3] - a.box[1], 1.0)
    tol = share * size
    if max(abs(u - v) for u, v in zip(a.box, b.box)) > tol:
        return False
    if a.orientation is not None and b.orientation is not None:
        if abs(normalise_orientation(a.orientation - b.orientation)) > turn_deg:
            return False
    return max(abs(a.anchor[0] - b.anchor[0]), abs(a.anchor[1] - b.anchor[1])) <= tol


def _doubtful(ev: Event, zone: str | None, lost: list[tuple[str, str, int, bool]]) -> bool:
    """Whether `ev`, adding cards to the melds of `zone`, may be a misreading of the melds there that lost
    cards (`lost` as `Referee._match` gives it): a card read otherwise shows as one lost and one new in
    its meld's row. A lay-off on another meld is no misreading of it, unless a meld of the zone shows in no
    row at all (its cards may have gone to another row): a 3S laid off on Cy's run while the joker of her
    other run went unread (classic film 2000 round 6)."""
    here = [(k, whole) for z, _, k, whole in lost if z == zone]
    if not here:
        return False
    if isinstance(ev, LayOff):
        return any(k == ev.meld or whole for k, whole in here)
    return True


def _same_index(a: SeenCard, b: SeenCard, share: float = 0.08) -> bool:
    """Whether `b`'s leading index lies where `a`'s did (within `share` of `a`'s card size)."""
    tol = share * max(a.box[2] - a.box[0], a.box[3] - a.box[1], 1.0)
    return max(abs(a.anchor[0] - b.anchor[0]), abs(a.anchor[1] - b.anchor[1])) <= tol


def _minus(cards: list[SeenCard], remove: Counter[str]) -> list[SeenCard]:
    left = Counter(remove)
    out = []
    for c in cards:
        if left[c.card] > 0:
            left[c.card] -= 1
        else:
            out.append(c)
    return out


def _layoff_cards(meld: Meld, row: SeenMeld, add: list[SeenCard]) -> tuple[str, ...]:
    """The lay-off as written: a joker onto a run gets its role from where it lies in the row.

    The row reads the run ascending or descending, the meld's cards in one block with the new cards
    beyond its ends; which joker of the row is the new one does not matter, only where the block
    lies. The cards are written nearest the meld first (each one extends the run by one)."""
    if meld.kind != "run" or not any(c.card == "JK" for c in add):
        return tuple(c.card for c in add)
    names = list(row.names)
    want = Counter(c.card for c in add)
    n = len(meld.cards)
    for seq in (names, names[::-1]):
        for lows in range(len(seq) - n + 1):
            if tuple(seq[lows : lows + n]) != tuple(meld.cards):
                continue
            below, above = seq[:lows], seq[lows + n :]
            if Counter(below + above) != want:
                continue
            out = []
            for k, c in enumerate(reversed(below)):  # nearest the meld first
                out.append(f"JK:{position_rank(meld.low - 1 - k)}{meld.suit}" if c == "JK" else c)
            for k, c in enumerate(above):
                out.append(f"JK:{position_rank(meld.high + 1 + k)}{meld.suit}" if c == "JK" else c)
            return tuple(out)
    return tuple(c.card for c in add)


def snapshot_summary(snap: TableSnapshot) -> dict[str, Any]:
    """A small readable form of a snapshot (for logs and the debug page)."""
    return {
        "t": snap.t,
        "seats": [[list(m.names) for m in melds] for melds in snap.seats],
        "discard_top": snap.discard_top.card if snap.discard_top else None,
        "stray": [c.card for c in snap.stray],
    }
