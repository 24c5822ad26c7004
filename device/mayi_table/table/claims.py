""" "May I?" claim windows: seat button presses in, one decision per discard out.

Pure code with an injected clock: every call takes `now` (monotonic seconds) from the caller and
nothing here sleeps or reads a clock, so tests need no hardware and no waiting.

How a window decides (petras §05; classic Gameplay 4, 8-9; RULES.md "Decisions where the seeds are
silent"):

- A discard opens a window of `length_s` seconds for the card now on top of the pile. A press at
  `opened_at <= t < opened_at + length_s` counts; earlier or later presses are ignored and reported.
- The press of the player to act (`game.round.turn`, the next seat clockwise after the discarder)
  means "I take it as my draw": a free draw from the discard pile, no penalty. It beats every claim
  in both profiles and decides the window at once.
- Otherwise the window decides when it closes: among the seats that pressed, the one nearest
  clockwise after the discarder wins (`engine.claim_winner`), not the fastest. Claimants the rules
  refuse (classic's 3 buys a round, petras' same-buyer-twice-in-a-row, no penalty card to be had)
  are passed over; so is the discarder, who cannot claim back the card it has just thrown.
- A window decides once. After that it is closed and every later press is ignored, so one card is
  never granted twice. After a buy, the referee applies it and calls `ClaimDesk.on_buy`: the newly
  exposed discard gets a window of its own (petras §05: another seat may buy it, the same buyer may
  not; classic does not address it, and the engine allows it within the 3-buy limit).

`ClaimDesk` ties a debouncer and the current window together for the referee; which seat's LED
lights is data (`ClaimDesk.lit`), never a GPIO call.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Deque, Literal

from ..rules.cards import Card
from ..rules.engine import Game, Round, claim_winner
from ..rules.events import Buy, Discard, Draw, Event

DEFAULT_LENGTH_S = 3.0
DEFAULT_BOUNCE_S = 0.05
DEFAULT_LIT_S = 2.0

DecisionKind = Literal["draw", "buy", "none"]
PressStatus = Literal["claim", "take", "repeat", "bounce", "ignored"]


class ClaimError(ValueError):
    """A claim window asked for where no discard can be claimed (no round in play, nothing on the
    pile, or the player to act has drawn already)."""


@dataclass(frozen=True)
class Press:
    """A seat's "May I?" button pressed at monotonic time `t` (seconds)."""

    seat: str
    t: float


@dataclass(frozen=True)
class PressOutcome:
    """What became of one press.

    `claim`: a claim on the top discard, decided when the window closes. `take`: the player to act
    takes the discard as its draw (the window is decided). `repeat`: the seat has claimed already in
    this window; it counts once. `bounce`: contact bounce, ignored. `ignored`: outside any window,
    after the window decided, or from a seat not playing this round; `reason` says which.
    """

    press: Press
    status: PressStatus
    reason: str = ""

    @property
    def counted(self) -> bool:
        return self.status in ("claim", "take")


@dataclass(frozen=True)
class Decision:
    """The result of one claim window.

    `kind`: `draw` (the player to act takes the card as its draw, free), `buy` (`seat` buys it and
    takes a penalty card), or `none`. `card` is the top discard the window was for. `presses` are
    the counted presses in the order they came. `passed_over` gives each other counted seat and why
    it lost (e.g. ``("C", "B was nearer (petras §05)")``); `reason` explains the decision in a line.
    """

    kind: DecisionKind
    seat: str | None
    card: Card | None
    presses: tuple[Press, ...]
    passed_over: tuple[tuple[str, str], ...]
    reason: str
    rule: str
    opened_at: float
    decided_at: float

    @property
    def granted(self) -> bool:
        return self.kind != "none"

    @property
    def lit(self) -> str | None:
        """The seat whose LED lights for this decision: the winner, or None."""
        return self.seat if self.kind != "none" else None

    def why(self, seat: str) -> str | None:
        """Why `seat` lost this window, or None if it won or did not press."""
        for s, why in self.passed_over:
            if s == seat:
                return why
        return None

    def event(self, penalty: Card | None = None, at: str | None = None) -> Draw | Buy | None:
        """The game event this decision asks the referee to journal and apply (source `button`).

        A buy in an observed game names no penalty card; a game that records hands needs `penalty`.
        """
        if self.kind == "draw" and self.seat is not None:
            return Draw(self.seat, "discard", at=at, source="button")
        if self.kind == "buy" and self.seat is not None:
            return Buy(self.seat, penalty, at=at, source="button")
        return None


class Debouncer:
    """Drops contact bounce: a press from a seat less than `bounce_s` after that seat's previous
    accepted press is ignored. Presses of different seats never affect each other."""

    def __init__(self, bounce_s: float = DEFAULT_BOUNCE_S) -> None:
        if bounce_s < 0:
            raise ValueError(f"bounce_s must be >= 0, not {bounce_s}")
        self.bounce_s = bounce_s
        self._last: dict[str, float] = {}

    def accept(self, press: Press) -> bool:
        last = self._last.get(press.seat)
        if last is not None and abs(press.t - last) < self.bounce_s:
            return False
        self._last[press.seat] = press.t
        return True

    def reset(self) -> None:
        self._last.clear()


def _claimable(game: Game) -> Round | None:
    """The round if its top discard can be taken now (a discard made, no draw yet), else None."""
    r = game.round
    if r is None or r.over or game.complete or r.drawn or not r.pile:
        return None
    return r


class ClaimWindow:
    """The claim window on the current top discard of `game`, open for `opened_at <= t < closes_at`.

    The window reads `game` (the referee's live game) and never changes it. If the game changes
    while the window is open (an event is applied), the window is stale: it decides `none` and
    grants nothing, since the card or the turn it was opened for may be gone.

    `after_buy`: the window is for a discard newly exposed by a buy; the seat that discarded it is
    then unknown, so no seat is passed over as its discarder.
    """

    def __init__(
        self, game: Game, opened_at: float, length_s: float = DEFAULT_LENGTH_S, after_buy: bool = False
    ) -> None:
        if not length_s > 0:
            raise ValueError(f"a claim window lasts more than 0 seconds, not {length_s}")
        r = _claimable(game)
        if r is None:
            raise ClaimError("no discard can be claimed now: no round in play, no discard, or the draw is made")
        self.game = game
        self.opened_at = opened_at
        self.length_s = length_s
        self.closes_at = opened_at + length_s
        self.card: Card = r.pile[-1]
        self.turn: str = r.turn
        i = r.players.index(r.turn)
        self.discarder: str | None = None if after_buy else r.players[(i - 1) % len(r.players)]
        self.rule = game.profile.ref("buy")
        self._round = r
        self._events_at_open = game.events
        self._claims: dict[str, Press] = {}
        self._counted: list[Press] = []
        self.outcomes: list[PressOutcome] = []
        self.decision: Decision | None = None
        self.handed_out = False  # set by ClaimDesk once the decision is delivered

    # ----- state -----------------------------------------------------------------------
    @property
    def decided(self) -> bool:
        return self.decision is not None

    def stale(self) -> bool:
        """Whether the game has moved on since the window opened."""
        return self.game.round is not self._round or self.game.events != self._events_at_open

    def claimants(self) -> list[str]:
        """The seats claiming so far, in the order they pressed."""
        return list(self._claims)

    # ----- presses ---------------------------------------------------------------------
    def press(self, press: Press) -> PressOutcome:
        """Count one (debounced) press, or report why it is ignored."""
        out = self._classify(press)
        self.outcomes.append(out)
        return out

    def _classify(self, p: Press) -> PressOutcome:
        if p.t < self.opened_at:
            return PressOutcome(p, "ignored", f"{p.seat} pressed before the window on {self.card} opened")
        if p.t >= self.closes_at:
            self.close(p.t)
            return PressOutcome(p, "ignored", f"{p.seat} pressed after the window on {self.card} closed")
        if self.decision is not None:
            return PressOutcome(p, "ignored", f"the window on {self.card} is decided: {self.decision.reason}")
        if self.stale():
            self._decide(p.t)
            return PressOutcome(p, "ignored", f"the game moved on; {self.card} can no longer be claimed")
        players = self._round.players
        if p.seat not in players:
            return PressOutcome(p, "ignored", f"{p.seat} is not playing this round ({', '.join(players)} are)")
        if p.seat == self.turn:
            self._counted.append(p)
            self._decide(p.t, taker=p.seat)
            return PressOutcome(p, "take", f"{p.seat} takes {self.card} as its draw, free")
        if p.seat in self._claims:
            return PressOutcome(p, "repeat", f"{p.seat} has claimed {self.card} already; a claim counts once")
        self._claims[p.seat] = p
        self._counted.append(p)
        return PressOutcome(p, "claim", f"{p.seat} claims {self.card}")

    # ----- deciding --------------------------------------------------------------------
    def poll(self, now: float) -> Decision | None:
        """The decision once the window has closed (`now >= closes_at`) or was decided early; else None."""
        if self.decision is None and now >= self.closes_at:
            self._decide(self.closes_at)
        return self.decision

    def close(self, now: float) -> Decision | None:
        """Same as `poll`: the window closes by time, at `opened_at + length_s`; before that, None
        (see `close_early`)."""
        return self.poll(now)

    def close_early(self, now: float) -> Decision:
        """Close now, before the time is up: the player to act has declined (drawn from the stock,
        "announced stock"), so the claims made so far are decided at once. A decided window keeps
        its decision."""
        if self.decision is None:
            self._decide(min(max(now, self.opened_at), self.closes_at))
        assert self.decision is not None
        return self.decision

    def _decide(self, at: float, taker: str | None = None) -> None:
        presses = tuple(self._counted)
        card = self.card
        if self.stale():
            why = f"the game moved on before the window on {card} closed"
            self.decision = Decision("none", None, card, presses, (), why, self.rule, self.opened_at, at)
            return
        if taker is not None:
            why = f"{taker} takes {card} as its draw: the player to act comes first ({self.rule})"
            lost = tuple((s, why) for s in self._claims)
            reason = f"{taker} takes {card} as its draw, free, no penalty"
            self.decision = Decision("draw", taker, card, presses, lost, reason, self.rule, self.opened_at, at)
            return
        claimants = [s for s in self._claims if s != self.discarder]
        winner = claim_winner(self.game, claimants)
        lost_list: list[tuple[str, str]] = []
        for s in self._claims:
            if s == winner:
                continue
            if s == self.discarder:
                lost_list.append((s, f"{s} discarded {card} and cannot claim it back"))
                continue
            refusal = self.game.buy_refusal(s)
            if refusal is not None:
                lost_list.append((s, str(refusal)))
            else:
                lost_list.append((s, f"{winner} was nearer ({self.rule}: nearest clockwise wins, not the fastest)"))
        lost = tuple(lost_list)
        if winner is not None:
            where = f"after {self.discarder}" if self.discarder else f"from {self.turn}, the player to act"
            reason = f"{winner} buys {card}: the nearest claimant clockwise {where} ({self.rule})"
            self.decision = Decision("buy", winner, card, presses, lost, reason, self.rule, self.opened_at, at)
        else:
            reason = f"nobody claimed {card}" if not self._claims else f"no claimant may buy {card}"
            self.decision = Decision("none", None, card, presses, lost, reason, self.rule, self.opened_at, at)


class ClaimDesk:
    """The referee's side of the buttons: debounces presses, keeps the current window, hands out
    each decision exactly once through `poll`, and says which LED is lit.

    The referee's loop:

    - after it applies a `Discard`: `on_discard(now)`; after a `Buy`: `on_buy(now)` (or
      `on_event(ev, now)` for either, which also closes the window on any other event);
    - on a button: `on_press(seat, now)`, then `poll(now)`; on a timer tick: `poll(now)`;
    - a decision's `event()` is journaled and applied by the referee, which then calls `on_event`;
    - when the camera sees the player to act draw from the stock while a window is open, call
      `decline(now)` and apply its decision (a buy) before the draw: the engine takes buys only
      between a discard and the next draw.
    """

    def __init__(
        self,
        game: Game,
        length_s: float = DEFAULT_LENGTH_S,
        bounce_s: float = DEFAULT_BOUNCE_S,
        lit_s: float = DEFAULT_LIT_S,
        history: int = 200,
    ) -> None:
        self.game = game
        self.length_s = length_s
        self.lit_s = lit_s
        self.debouncer = Debouncer(bounce_s)
        self.window: ClaimWindow | None = None
        self.log: Deque[PressOutcome] = deque(maxlen=history)
        self.decisions: Deque[Decision] = deque(maxlen=history)
        self._pending: ClaimWindow | None = None
        self._now = float("-inf")
        self._lit: tuple[str, float] | None = None

    def set_game(self, game: Game) -> None:
        """Follow another game object (after a rebuild or a correction); the open window is dropped."""
        self.game = game
        self.window = None
        self._pending = None
        self._lit = None

    # ----- windows ---------------------------------------------------------------------
    def on_discard(self, now: float) -> ClaimWindow | None:
        """A discard was applied: open a window on it (None when nothing can be claimed, e.g. the
        discard went out)."""
        return self._open(now, after_buy=False)

    def on_buy(self, now: float) -> ClaimWindow | None:
        """A buy was applied: open a window on the newly exposed discard, if there is one."""
        return self._open(now, after_buy=True)

    def on_event(self, ev: Event, now: float) -> ClaimWindow | None:
        """Any event the referee applied: a discard or a buy opens a window; anything else closes
        the open one (the card was drawn, the round ended...)."""
        if isinstance(ev, Discard):
            return self.on_discard(now)
        if isinstance(ev, Buy):
            return self.on_buy(now)
        self._tick(now)
        self._finish_window(now)
        self.window = None
        return None

    def _open(self, now: float, after_buy: bool) -> ClaimWindow | None:
        self._tick(now)
        w = self.window
        if w is not None and not w.stale():
            return w  # the same position: never a second window (nor a second grant) on one card
        self._finish_window(now)
        self.window = None
        if _claimable(self.game) is None:
            return None
        self.window = ClaimWindow(self.game, now, self.length_s, after_buy=after_buy)
        return self.window

    def _finish_window(self, now: float) -> None:
        """Decide the open window before it is replaced (a stale one grants nothing)."""
        w = self.window
        if w is not None and w.decision is None:
            w.close_early(now)
            self._collect(w)

    def decline(self, now: float) -> Decision | None:
        """The player to act declines the discard (draws from the stock): close the window now."""
        self._tick(now)
        w = self.window
        if w is None:
            return None
        w.close_early(now)
        self._collect(w)
        return self.poll(now)

    # ----- presses and decisions -------------------------------------------------------
    def on_press(self, seat: str, now: float) -> PressOutcome:
        self._tick(now)
        p = Press(seat, now)
        if not self.debouncer.accept(p):
            out = PressOutcome(p, "bounce", f"{seat} pressed again within {self.debouncer.bounce_s}s: contact bounce")
        elif self.window is None:
            out = PressOutcome(p, "ignored", "no claim window is open")
        else:
            out = self.window.press(p)
            self._collect(self.window)
        self.log.append(out)
        return out

    def poll(self, now: float) -> Decision | None:
        """A decision not handed out before, or None. Call it after each press and on a timer."""
        self._tick(now)
        if self.window is not None:
            self.window.poll(now)
            self._collect(self.window)
        w, self._pending = self._pending, None
        if w is None or w.decision is None or w.stale():
            return None  # a decision the game has moved past is never handed out
        return w.decision

    def _collect(self, w: ClaimWindow) -> None:
        d = w.decision
        if d is None or w.handed_out:
            return
        w.handed_out = True
        self.decisions.append(d)
        if w.stale():
            return  # the game moved on without it: nothing for the referee to do
        self._pending = w
        if d.lit is not None:
            self._lit = (d.lit, d.decided_at + self.lit_s)

    # ----- LEDs as data ----------------------------------------------------------------
    def _tick(self, now: float) -> None:
        self._now = max(self._now, now)

    @property
    def lit(self) -> str | None:
        """The seat whose LED is lit: the latest winner, for `lit_s` seconds after its decision."""
        if self._lit is None:
            return None
        seat, until = self._lit
        return seat if self._now < until else None

    def lit_at(self, now: float) -> str | None:
        self._tick(now)
        return self.lit
