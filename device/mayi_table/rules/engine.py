"""The game as a state machine: `Game.apply(event)` checks an event against the rules and applies it.

Every check runs before anything changes, so an `IllegalMove` leaves the game as it was.
`apply(game, event)` is the pure form: it returns a new game and leaves its argument alone.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from .cards import Card, make_deck, parse_placed, sorted_cards
from .events import Buy, Deal, Discard, Draw, Event, GameStart, LayOff, Open, RoundEnd
from .melds import Meld, MeldError, fitting_layoffs, layoff, read_meld
from .profiles import Contract, ProfileError, RuleProfile, make_profile


class IllegalMove(Exception):
    """An event the rules forbid. `rule` names the source, e.g. `petras §05`."""

    def __init__(self, message: str, rule: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.rule = rule

    def __str__(self) -> str:
        return f"{self.message} ({self.rule})" if self.rule else self.message


@dataclass
class RoundResult:
    round: int | str
    went_out: str | None
    scores: dict[str, int]


@dataclass
class Round:
    number: int | str
    contract: Contract
    dealer: str
    players: tuple[str, ...]
    observed: bool
    counts: dict[str, int]  # cards in each hand
    hands: dict[str, Counter[Card]]  # known games only
    stock: Counter[Card]  # known games only
    unseen: Counter[Card]  # observed games: every card not face-up (stock and hands)
    stock_count: int
    pile: list[Card]
    table: list[Meld] = field(default_factory=list)
    opened: set[str] = field(default_factory=set)
    opened_this_turn: str | None = None
    turn: str = ""
    drawn: bool = False
    buys: dict[str, int] = field(default_factory=dict)
    last_buyer: str | None = None  # since the last discard (petras §05)
    recycles: int = 0
    went_out: str | None = None
    over: bool = False
    last_round: bool = False
    dead_checked_at: int = 0  # the recycling count when the table was last checked for a dead end

    def copy(self) -> Round:
        """A copy whose containers are its own (melds and cards are immutable)."""
        return replace(
            self,
            counts=dict(self.counts),
            hands={s: Counter(h) for s, h in self.hands.items()},
            stock=Counter(self.stock),
            unseen=Counter(self.unseen),
            pile=list(self.pile),
            table=list(self.table),
            opened=set(self.opened),
            buys=dict(self.buys),
        )

    def next_player(self, seat: str) -> str:
        i = self.players.index(seat)
        return self.players[(i + 1) % len(self.players)]


class Game:
    """A game of May I? under one rule profile, built by applying events in order."""

    def __init__(self, start: GameStart) -> None:
        try:
            self.profile: RuleProfile = make_profile(start.profile, start.variants, len(start.seats), start.card_values)
        except ProfileError as e:
            raise IllegalMove(str(e)) from None
        self.start = start
        self.seats: tuple[str, ...] = start.seats
        self.deck: Counter[Card] = make_deck(
            self.profile.decks(len(self.seats)), self.profile.jokers_per_deck * self.profile.decks(len(self.seats))
        )
        self.results: list[RoundResult] = []
        self.round: Round | None = None
        self.tiebreak_players: tuple[str, ...] = ()
        self.complete = False
        self.winners: list[str] = []
        self.events = 1

    # ----- copying and the pure form -------------------------------------------------
    def copy(self) -> Game:
        g = Game.__new__(Game)
        g.__dict__.update(self.__dict__)
        g.results = list(self.results)
        g.round = self.round.copy() if self.round is not None else None
        g.winners = list(self.winners)
        return g

    # ----- helpers ---------------------------------------------------------------------
    def _ref(self, key: str) -> str:
        return self.profile.ref(key)

    def _play_round(self) -> Round:
        r = self.round
        if self.complete:
            raise IllegalMove("the game is over")
        if r is None:
            raise IllegalMove("no round has been dealt yet", self._ref("deal"))
        if r.over:
            raise IllegalMove(f"round {r.number} is over; deal the next round", self._ref("deal"))
        return r

    def _seat_in_round(self, r: Round, seat: str) -> None:
        if seat not in r.players:
            raise IllegalMove(f"{seat} is not playing this round (only {', '.join(r.players)})")

    def _take_from_hand(self, r: Round, seat: str, cards: list[Card], what: str) -> None:
        """Check `seat` holds `cards` (in an observed game: that they are not face-up elsewhere)."""
        need = Counter(cards)
        if r.counts[seat] < len(cards):
            raise IllegalMove(f"{seat} holds {r.counts[seat]} cards and cannot {what} {len(cards)}")
        have = r.unseen if r.observed else r.hands[seat]
        for card, n in need.items():
            if have[card] < n:
                where = "in play already" if r.observed else f"not in {seat}'s hand"
                raise IllegalMove(f"{card} is {where}; {seat} cannot {what} it")

    def _remove_from_hand(self, r: Round, seat: str, cards: Iterable[Card]) -> None:
        have = r.unseen if r.observed else r.hands[seat]
        for c in cards:
            have[c] -= 1
            if not have[c]:
                del have[c]
            r.counts[seat] -= 1

    def _add_to_hand(self, r: Round, seat: str, card: Card | None) -> None:
        if card is not None:
            (r.unseen if r.observed else r.hands[seat])[card] += 1
        r.counts[seat] += 1

    def _stock_ready(self, r: Round) -> bool:
        """Whether the stock can give a card, recycling the pile if it is empty and the profile allows."""
        if r.stock_count > 0:
            return True
        limit = self.profile.stock_recycles
        return len(r.pile) > 1 and (limit is None or r.recycles < limit)

    def _recycle_if_empty(self, r: Round) -> None:
        # petras §06 / classic Scoring: old discards except the top card become the new stock.
        if r.stock_count == 0:
            moved = r.pile[:-1]
            r.pile = r.pile[-1:]
            r.stock_count = len(moved)
            r.recycles += 1
            if r.observed:
                r.unseen.update(moved)
            else:
                r.stock.update(moved)

    def _take_stock(self, r: Round, seat: str, card: Card | None, what: str) -> None:
        if not r.observed:
            if card is None:
                raise IllegalMove(f"name the card {seat} {what} from the stock (this game records hands)")
            stock_after = r.stock if r.stock_count else Counter(r.pile[:-1])
            if stock_after[card] < 1:
                raise IllegalMove(f"the stock holds no {card} for {seat} to take")
        elif card is not None:
            pool = r.unseen if r.stock_count else r.unseen + Counter(r.pile[:-1])
            if pool[card] < 1:
                raise IllegalMove(f"{card} is face-up elsewhere; it cannot come from the stock")
        self._recycle_if_empty(r)
        r.stock_count -= 1
        if r.observed:
            r.counts[seat] += 1
        else:
            assert card is not None
            r.stock[card] -= 1
            if not r.stock[card]:
                del r.stock[card]
            self._add_to_hand(r, seat, card)

    # ----- the event dispatcher --------------------------------------------------------
    def apply(self, ev: Event) -> None:
        """Apply one event in place, or raise `IllegalMove` and change nothing."""
        if isinstance(ev, Draw):
            self._draw(ev)
        elif isinstance(ev, Discard):
            self._discard(ev)
        elif isinstance(ev, Buy):
            self._buy(ev)
        elif isinstance(ev, Open):
            self._open(ev)
        elif isinstance(ev, LayOff):
            self._layoff(ev)
        elif isinstance(ev, Deal):
            self._deal(ev)
        elif isinstance(ev, RoundEnd):
            self._round_end(ev)
        elif isinstance(ev, GameStart):
            raise IllegalMove("the game line may only be the first line")
        else:  # pragma: no cover - the Event union is closed
            raise IllegalMove(f"unknown event {ev!r}")
        self.events += 1

    # ----- deal ------------------------------------------------------------------------
    def expected_round(self) -> int | str | None:
        """The round the next deal must be, or None when no deal is due."""
        if self.complete or (self.round is not None and not self.round.over):
            return None
        if self.round is not None and not self._scored(self.round):
            return None  # an observed round waits for its round_end
        if self.tiebreak_players:
            return "tiebreak"
        return len(self.results) + 1

    def expected_dealer(self) -> str | None:
        if self.round is None:
            return None  # petras §02 by lot, classic Setup high card: any seat deals first
        i = self.seats.index(self.round.dealer)
        return self.seats[(i + 1) % len(self.seats)]

    def _deal(self, ev: Deal) -> None:
        want = self.expected_round()
        if want is None:
            if self.complete:
                raise IllegalMove("the game is over; no more rounds are dealt")
            raise IllegalMove("the round in play has not ended yet", self._ref("deal"))
        if ev.round != want:
            raise IllegalMove(f"the next deal is round {want}, not {ev.round}", self._ref("deal"))
        dealer = self.expected_dealer()
        if dealer is not None and ev.dealer != dealer:
            raise IllegalMove(f"the deal passes clockwise: {dealer} deals now, not {ev.dealer}", self._ref("deal"))
        contract = self.profile.contract(want)
        players = self.tiebreak_players or self.seats
        deck = self.deck
        if ev.hands is None:
            if deck[ev.upcard] < 1:
                raise IllegalMove(f"the deck has no {ev.upcard}")
            hands: dict[str, Counter[Card]] = {}
            unseen = deck.copy()
            unseen[ev.upcard] -= 1
            stock: Counter[Card] = Counter()
        else:
            if set(ev.hands) != set(players):
                raise IllegalMove(f"the deal must give hands to exactly {', '.join(players)}", self._ref("deal"))
            hands = {}
            for s in players:
                h = ev.hands[s]
                if len(h) != contract.dealt:
                    raise IllegalMove(
                        f"round {want} deals {contract.dealt} cards each; {s} was dealt {len(h)}", self._ref("deal")
                    )
                hands[s] = Counter(h)
            used = Counter([ev.upcard])
            for h2 in hands.values():
                used.update(h2)
            over = used - deck
            if over:
                c, n = next(iter(over.items()))
                raise IllegalMove(f"the deck holds only {deck[c]} {c}, but the deal shows {deck[c] + n}")
            stock = deck - used
            unseen = Counter()
        stock_count = sum(deck.values()) - len(players) * contract.dealt - 1
        if stock_count < 0:
            raise IllegalMove("the deck is too small for this deal")
        last = want == len(self.profile.rounds) or want == "tiebreak"
        r = Round(
            number=want,
            contract=contract,
            dealer=ev.dealer,
            players=players,
            observed=ev.hands is None,
            counts={s: contract.dealt for s in players},
            hands=hands,
            stock=stock,
            unseen=unseen,
            stock_count=stock_count,
            pile=[ev.upcard],
            buys={s: 0 for s in players},
            last_round=last and want != "tiebreak",
        )
        # the player left of (clockwise after) the dealer starts; in a tie-break, the next tied player
        seq = self.seats
        i = seq.index(ev.dealer)
        r.turn = next(seq[(i + k) % len(seq)] for k in range(1, len(seq) + 1) if seq[(i + k) % len(seq)] in players)
        self.round = r

    # ----- draw ------------------------------------------------------------------------
    def _draw(self, ev: Draw) -> None:
        r = self._play_round()
        self._seat_in_round(r, ev.seat)
        if ev.seat != r.turn:
            raise IllegalMove(f"it is {r.turn}'s turn, not {ev.seat}'s", self._ref("turn"))
        if r.drawn:
            raise IllegalMove(f"{ev.seat} has already drawn this turn", self._ref("turn"))
        if ev.source_pile == "discard":
            if not r.pile:
                raise IllegalMove("the discard pile is empty", self._ref("turn"))
            card = r.pile.pop()
            self._add_to_hand(r, ev.seat, card)
        else:
            if not self._stock_ready(r):
                raise IllegalMove("the stock is empty and cannot be refilled; take the discard", self._ref("stock"))
            self._take_stock(r, ev.seat, ev.card, "draws")
        r.drawn = True
        r.last_buyer = None
        self._check_exhaustion(r)

    # ----- buy -------------------------------------------------------------------------
    def buy_refusal(self, seat: str) -> IllegalMove | None:
        """Why `seat` may not buy the top discard now, or None if it may."""
        r = self.round
        p = self.profile
        ref = self._ref("buy")
        if r is None or r.over or self.complete:
            return IllegalMove("no round is in play")
        if seat not in r.players:
            return IllegalMove(f"{seat} is not playing this round")
        if not p.buys_allowed:
            return IllegalMove("this game is played without buying (no-buy variant)", "classic Common variants: no-buy")
        if r.drawn:
            return IllegalMove(f"{r.turn} has already drawn; a buy comes after a discard, before the next draw", ref)
        if not r.pile:
            return IllegalMove("there is no discard to buy", ref)
        if seat == r.turn and not p.turn_player_may_buy:
            return IllegalMove(f"it is {seat}'s turn: {seat} takes the discard as its draw, free, without a buy", ref)
        if p.buy_limit is not None and r.buys[seat] >= p.buy_limit:
            return IllegalMove(f"{seat} has used all {p.buy_limit} buys this round", ref)
        if p.consecutive_buyer_forbidden and r.last_buyer == seat:
            return IllegalMove(f"{seat} bought the last discard; the same player may not buy twice in a row", ref)
        if r.stock_count == 0:
            limit = p.stock_recycles
            # the bought card leaves first; the rest of the pile below its new top may be recycled
            if len(r.pile) - 1 <= 1 or (limit is not None and r.recycles >= limit):
                return IllegalMove("no penalty card can be had from the stock, so the buy is not completed", ref)
        return None

    def _buy(self, ev: Buy) -> None:
        refusal = self.buy_refusal(ev.seat)
        if refusal is not None:
            raise refusal
        r = self.round
        assert r is not None
        top = r.pile[-1]
        if r.stock_count == 0:
            rest = Counter(r.pile[:-2])
            pool = rest if not r.observed else r.unseen + rest
        else:
            pool = r.stock if not r.observed else r.unseen
        if not r.observed and ev.penalty is None:
            raise IllegalMove(f"name the penalty card {ev.seat} takes from the stock (this game records hands)")
        if ev.penalty is not None and pool[ev.penalty] < 1:
            raise IllegalMove(f"the stock holds no {ev.penalty} for the penalty card")
        r.pile.pop()
        self._add_to_hand(r, ev.seat, top)
        self._take_stock(r, ev.seat, ev.penalty, "takes as penalty")
        r.buys[ev.seat] += 1
        r.last_buyer = ev.seat
        self._check_exhaustion(r)

    # ----- open ------------------------------------------------------------------------
    def read_contract(self, seat: str, melds: tuple[tuple[str, ...], ...]) -> list[Meld]:
        """The melds of an opening read against this round's contract (petras §03; classic Gameplay 1)."""
        r = self.round
        assert r is not None
        c = r.contract
        p = self.profile
        ref = self._ref("contract")
        want = len(melds) == c.groups + c.runs
        if not want:
            raise IllegalMove(
                f"round {r.number} opens with exactly {c.words()} ({c.groups + c.runs} melds), not {len(melds)}", ref
            )
        options: list[list[Meld]] = []
        for m in melds:
            readings = read_meld(list(m), p, run_min=c.run_min, group_min=c.group_min, owner=seat)
            if not readings:
                raise IllegalMove(
                    f"{' '.join(m)} is neither a group of {c.group_min}+ nor a run of {c.run_min}+ of one suit",
                    self._ref("meld"),
                )
            options.append(readings)
        fits: list[list[Meld]] = []

        def walk(i: int, chosen: list[Meld], groups: int) -> None:
            if i == len(options):
                if groups == c.groups:
                    fits.append(list(chosen))
                return
            for m2 in options[i]:
                g = groups + (m2.kind == "group")
                if g <= c.groups and (i + 1 - g) <= c.runs:
                    chosen.append(m2)
                    walk(i + 1, chosen, g)
                    chosen.pop()

        walk(0, [], 0)
        if not fits:
            raise IllegalMove(f"these melds are not {c.words()} as round {r.number} asks", ref)
        if len(fits) > 1:
            raise IllegalMove(
                "a joker's role is ambiguous in this opening; write it as JK:<card> (e.g. JK:9H)", self._ref("joker")
            )
        return fits[0]

    def _open(self, ev: Open) -> None:
        r = self._play_round()
        self._seat_in_round(r, ev.seat)
        ref = self._ref("open")
        if ev.seat != r.turn:
            raise IllegalMove(f"the contract is laid on one's own turn; it is {r.turn}'s turn", ref)
        if not r.drawn:
            raise IllegalMove(f"{ev.seat} must draw before laying the contract", ref)
        if ev.seat in r.opened:
            raise IllegalMove(f"{ev.seat} has already laid its contract this round; no new melds, only lay-offs", ref)
        melds = self.read_contract(ev.seat, ev.melds)
        cards = [c for m in melds for c in m.cards]
        self._take_from_hand(r, ev.seat, cards, "lay")
        left = r.counts[ev.seat] - len(cards)
        if left == 0 and not self._may_empty_hand_by_melding(r):
            raise IllegalMove(
                f"{ev.seat} must keep a card for the final discard: one goes out by discarding", self._ref("going_out")
            )
        if r.last_round and self.profile.last_round_all_at_once and left > 0 and not r.observed:
            from .search import can_lay_off_all

            rest = r.hands[ev.seat] - Counter(cards)
            if not can_lay_off_all(list(rest.elements()), r.table + melds, self.profile):
                raise IllegalMove(
                    f"in the last round the contract goes down only when going out: {ev.seat} cannot meld "
                    "or lay off every card this turn",
                    "classic Gameplay 1, 7, 10",
                )
        self._remove_from_hand(r, ev.seat, cards)
        r.table.extend(melds)
        r.opened.add(ev.seat)
        r.opened_this_turn = ev.seat
        self._check_out_by_melding(r, ev.seat)

    def _may_empty_hand_by_melding(self, r: Round) -> bool:
        # classic Gameplay 1/7/10: in round 7 one goes out by melding, never by a discard.
        return r.last_round and not self.profile.last_round_out_by_discard

    def _check_out_by_melding(self, r: Round, seat: str) -> None:
        if r.counts[seat] == 0:
            self._end_round(r, went_out=seat)

    # ----- lay-off ---------------------------------------------------------------------
    def _layoff(self, ev: LayOff) -> None:
        r = self._play_round()
        self._seat_in_round(r, ev.seat)
        ref = self._ref("layoff")
        p = self.profile
        if ev.seat not in r.opened:
            raise IllegalMove(f"{ev.seat} must lay its contract before laying off", ref)
        if not p.layoff_any_time:
            if ev.seat != r.turn:
                raise IllegalMove(f"lay-offs are made on one's own turn; it is {r.turn}'s turn", ref)
            if not r.drawn:
                raise IllegalMove(f"{ev.seat} must draw before laying off", ref)
        if r.opened_this_turn == ev.seat and ev.seat == r.turn and not p.layoff_on_opening_turn:
            raise IllegalMove(f"no lay-off on the turn {ev.seat} opened; wait for a later turn", ref)
        if not 0 <= ev.meld < len(r.table):
            raise IllegalMove(
                f"there is no meld {ev.meld} on the table (melds are numbered 0 to {len(r.table) - 1})", ref
            )
        if not ev.cards:
            raise IllegalMove("a lay-off needs at least one card", ref)
        physical = [parse_placed(t)[0] for t in ev.cards]
        self._take_from_hand(r, ev.seat, physical, "lay off")
        if r.counts[ev.seat] == len(physical) and not self._may_empty_hand_by_melding(r):
            raise IllegalMove(
                f"{ev.seat} must keep a card for the final discard: one goes out by discarding", self._ref("going_out")
            )
        meld = r.table[ev.meld]
        pending = list(ev.cards)
        # naturals first, each where it fits; a card that fits only after another is retried
        pending.sort(key=lambda t: t.startswith("JK"))
        last_error: MeldError | None = None
        while pending:
            progress = False
            for t in list(pending):
                try:
                    meld = layoff(meld, t, p)
                except MeldError as e:
                    last_error = e
                    continue
                pending.remove(t)
                progress = True
            if not progress:
                assert last_error is not None
                raise IllegalMove(str(last_error), last_error.rule or ref)
        self._remove_from_hand(r, ev.seat, physical)
        r.table[ev.meld] = meld
        self._check_out_by_melding(r, ev.seat)

    # ----- discard ---------------------------------------------------------------------
    def _discard(self, ev: Discard) -> None:
        r = self._play_round()
        self._seat_in_round(r, ev.seat)
        if ev.seat != r.turn:
            raise IllegalMove(f"it is {r.turn}'s turn, not {ev.seat}'s", self._ref("turn"))
        if not r.drawn:
            raise IllegalMove(f"{ev.seat} must draw before discarding", self._ref("discard"))
        if r.counts[ev.seat] == 1 and self._may_empty_hand_by_melding(r):
            raise IllegalMove(
                "in the last round a discard may never empty the hand; go out by melding the last card",
                "classic Gameplay 1, 7, 10",
            )
        if r.last_round and self.profile.last_round_all_at_once and ev.seat in r.opened:
            raise IllegalMove(
                f"{ev.seat} laid the last round's contract and must go out by melding, with no final discard",
                "classic Gameplay 1, 7, 10",
            )
        self._take_from_hand(r, ev.seat, [ev.card], "discard")
        self._remove_from_hand(r, ev.seat, [ev.card])
        r.pile.append(ev.card)
        if r.counts[ev.seat] == 0:
            self._end_round(r, went_out=ev.seat)
            return
        r.turn = r.next_player(ev.seat)
        r.drawn = False
        r.last_buyer = None
        r.opened_this_turn = None
        self._check_exhaustion(r)

    # ----- stock exhaustion and round end ----------------------------------------------
    def _check_exhaustion(self, r: Round) -> None:
        if r.over:
            return
        limit = self.profile.stock_recycles
        if limit is not None and r.stock_count == 0 and r.recycles >= limit:
            # classic Scoring: a second exhaustion ends the round at once, every hand counted
            self._end_round(r, went_out=None)
        elif not r.drawn and r.stock_count == 0 and not r.pile:
            # petras §06: neither a draw nor a discard is possible: no winner, every hand counted
            self._end_round(r, went_out=None)
        elif limit is None and r.recycles != r.dead_checked_at and self._table_is_dead(r):
            # No card off the table extends any meld, and no player still to open could build the
            # contract even from every card off the table: nobody can ever go out, and cards only
            # cycle through the recycled stock. Like petras §06's "no draw nor discard possible",
            # the round ends with no winner and every hand counted. Checked once per recycling.
            self._end_round(r, went_out=None)

    def _table_is_dead(self, r: Round) -> bool:
        from .search import can_lay_contract

        r.dead_checked_at = r.recycles
        off_table: Counter[Card] = Counter(r.pile)
        if r.observed:
            off_table.update(r.unseen)
        else:
            off_table.update(r.stock)
            for h in r.hands.values():
                off_table.update(h)
        if any(fitting_layoffs(m, c, self.profile) for c in off_table for m in r.table):
            return False
        if len(r.opened) < len(r.players) and can_lay_contract(off_table, r.contract, self.profile):
            return False
        return True

    def _end_round(self, r: Round, went_out: str | None) -> None:
        r.over = True
        r.went_out = went_out
        if not r.observed:
            self._score(r, {s: list(r.hands[s].elements()) for s in r.players})

    def _score(self, r: Round, shown: dict[str, list[Card]]) -> None:
        value = self.profile.value
        scores = {s: sum(value(c) for c in shown[s]) for s in r.players}
        if r.went_out is not None:
            scores[r.went_out] = 0
        self.results.append(RoundResult(r.number, r.went_out, scores))
        self._after_round()

    def _scored(self, r: Round) -> bool:
        return bool(self.results) and self.results[-1].round == r.number

    def _round_end(self, ev: RoundEnd) -> None:
        r = self.round
        if r is None or not r.over:
            raise IllegalMove("the round has not ended: nobody has gone out and the stock is not exhausted")
        if not r.observed:
            self._check_shown(r, ev)  # a known round is scored already; the spread must match it
            return
        if self._scored(r):
            raise IllegalMove(f"round {r.number}'s hands have already been shown and scored")
        if set(ev.hands) != set(r.players):
            raise IllegalMove(f"round_end must show the hands of {', '.join(r.players)}")
        shown: Counter[Card] = Counter()
        for s in r.players:
            cards = ev.hands[s]
            if len(cards) != r.counts[s]:
                raise IllegalMove(f"{s} holds {r.counts[s]} cards but {len(cards)} were shown")
            shown.update(cards)
        over = shown - r.unseen
        if over:
            c = next(iter(over))
            raise IllegalMove(f"{c} is shown in a hand but every {c} is face-up elsewhere")
        self._score(r, {s: list(ev.hands[s]) for s in r.players})

    def _check_shown(self, r: Round, ev: RoundEnd) -> None:
        for s in r.players:
            if Counter(ev.hands.get(s, ())) != r.hands[s]:
                raise IllegalMove(
                    f"round_end shows {' '.join(ev.hands.get(s, ())) or 'nothing'} for {s}, "
                    f"but {s} holds {' '.join(sorted_cards(r.hands[s])) or 'nothing'}"
                )

    def _after_round(self) -> None:
        p = self.profile
        r = self.round
        assert r is not None
        if r.number == "tiebreak":
            contenders = self.tiebreak_players
            last = self.results[-1].scores
            low = min(last[s] for s in contenders)
            self.winners = [s for s in self.seats if s in contenders and last[s] == low]
            self.tiebreak_players = ()
            self.complete = True
            return
        if len(self.results) < len(p.rounds):
            return
        totals = self.totals()
        best = min(totals.values())
        tied = [s for s in self.seats if totals[s] == best]
        if len(tied) > 1 and p.ties == "rounds-won-then-tiebreak":
            won = {s: sum(1 for x in self.results if x.went_out == s) for s in tied}
            most = max(won.values())
            tied = [s for s in tied if won[s] == most]
            if len(tied) > 1:
                self.tiebreak_players = tuple(tied)
                return
        self.winners = tied
        self.complete = True

    def totals(self) -> dict[str, int]:
        t = {s: 0 for s in self.seats}
        for x in self.results:
            for s, v in x.scores.items():
                t[s] += v
        return t

    # ----- what the state looks like ----------------------------------------------------
    def accounted(self) -> Counter[Card]:
        """Every physical card by where it is now; equals the deck whenever a round is in play."""
        r = self.round
        if r is None:
            return Counter(self.deck)
        total: Counter[Card] = Counter(r.pile)
        for m in r.table:
            total.update(m.cards)
        if r.observed:
            total.update(r.unseen)
        else:
            total.update(r.stock)
            for h in r.hands.values():
                total.update(h)
        return total

    def state_dict(self) -> dict[str, Any]:
        r = self.round
        out: dict[str, Any] = {
            "profile": self.profile.name,
            "variants": list(self.profile.variants),
            "seats": list(self.seats),
        }
        if r is None:
            out.update(
                {
                    "round": None,
                    "turn": None,
                    "hands": {},
                    "table": [],
                    "discard_top": None,
                    "stock_count": None,
                    "buys": {},
                }
            )
            return out
        hands: dict[str, Any]
        if r.observed:
            hands = dict(r.counts)
        else:
            hands = {s: sorted_cards(r.hands[s]) for s in r.players}
        out.update(
            {
                "round": r.number,
                "contract": r.contract.words(),
                "dealer": r.dealer,
                "turn": None if r.over else r.turn,
                "phase": "over" if r.over else ("play" if r.drawn else "draw"),
                "observed": r.observed,
                "hands": hands,
                "hand_counts": dict(r.counts),
                "opened": [s for s in r.players if s in r.opened],
                "table": [m.written() for m in r.table],
                "meld_owners": [m.owner for m in r.table],
                "discard_top": r.pile[-1] if r.pile else None,
                "discard_count": len(r.pile),
                "stock_count": r.stock_count,
                "buys": dict(r.buys),
                "recycles": r.recycles,
                "next_round": self.expected_round(),
            }
        )
        if self.tiebreak_players:
            out["tiebreak_players"] = list(self.tiebreak_players)
        return out


def new_game(start: GameStart) -> Game:
    return Game(start)


def apply(game: Game, ev: Event) -> Game:
    """The pure form of `Game.apply`: a new game with `ev` applied."""
    g = game.copy()
    g.apply(ev)
    return g


@dataclass(frozen=True)
class Action:
    """Something a seat may do now: `event` is a concrete legal event when the hand is known;
    in an observed game the cards are unknown and `event` is None (`meld` names the lay-off target)."""

    kind: str  # draw_stock, draw_discard, buy, open, layoff, discard
    event: Event | None = None
    meld: int | None = None


def legal_actions(game: Game, seat: str) -> list[Action]:
    """What `seat` may do now. Each concrete event listed is checked by applying it to a copy."""
    from .search import layoff_options, search_contract

    r = game.round
    if r is None or r.over or game.complete or seat not in r.players:
        return []
    out: list[Action] = []

    def legal(ev: Event) -> bool:
        try:
            game.copy().apply(ev)
        except IllegalMove:
            return False
        return True

    def a_stock_card(pile_below: int) -> Card | None:
        # the stock's order is unknown to the engine: any card it holds stands for "the top one"
        if r is None or r.observed:
            return None
        return min(r.stock or Counter(r.pile[:-pile_below]))

    if game.buy_refusal(seat) is None:
        out.append(Action("buy", Buy(seat, a_stock_card(2))))
    if seat == r.turn and not r.drawn:
        if game._stock_ready(r):
            out.append(Action("draw_stock", Draw(seat, "stock", a_stock_card(1))))
        if r.pile:
            out.append(Action("draw_discard", Draw(seat, "discard")))
    playing = seat == r.turn and r.drawn
    if playing and seat not in r.opened:
        if r.observed:
            out.append(Action("open"))
        else:
            plan = search_contract(r.hands[seat], r.contract, game.profile, partial=False)
            if plan is not None and legal(ev := Open(seat, plan.melds)):
                out.append(Action("open", ev))
    if seat in r.opened and (playing or game.profile.layoff_any_time):
        if r.observed:
            out.extend(Action("layoff", meld=i) for i in range(len(r.table)))
        else:
            for i, written in layoff_options(r.hands[seat], r.table, game.profile):
                if legal(ev2 := LayOff(seat, i, (written,))):
                    out.append(Action("layoff", ev2, i))
    if playing:
        if r.observed:
            out.append(Action("discard"))
        else:
            for c in sorted_cards(list(r.hands[seat])):
                if legal(ev3 := Discard(seat, c)):
                    out.append(Action("discard", ev3))
    return out


def claim_winner(game: Game, claimants: Iterable[str]) -> str | None:
    """Who gets the top discard among seats calling "May I?" now, or None if none may buy.

    The nearest claimant clockwise after the discarder wins, not the fastest or loudest (petras §05;
    classic Gameplay 8); the player to act comes first, since it is the next seat. Claimants the
    rules refuse (limits, the consecutive-buyer rule, no penalty card) are passed over. The player
    to act taking the discard as its normal draw is a draw, not a claim.
    """
    r = game.round
    if r is None or r.over:
        return None
    wanting = set(claimants)
    start = r.players.index(r.turn)
    for k in range(len(r.players)):
        seat = r.players[(start + k) % len(r.players)]
        if seat in wanting and game.buy_refusal(seat) is None:
            return seat
    return None
