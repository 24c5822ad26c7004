"""End to end without hardware: rendered bot games -> recogniser -> table reader -> referee -> journal.

For each profile, bot games (4 players) are filmed (`vision/render/game.py`), every frame goes
through the recogniser, the `TableReader` and the `Referee` into a temporary journal, and each
round's scores from the journal's game are compared with the true game's. A round whose scores
differ must have at least one flag; a silent mismatch makes the run exit with status 1.

    .venv/bin/python benchmarks/referee.py                       # oracle recogniser, >= 20 rounds a profile
    .venv/bin/python benchmarks/referee.py --recognizer onnx --rounds 2 --min-rounds 2
    .venv/bin/python benchmarks/referee.py --profiles classic --films 8 --rounds 1 --show-flags  # one round to debug
    .venv/bin/python benchmarks/referee.py --recognizer onnx --jobs 2 --threads 1     # the profiles side by side
    .venv/bin/python benchmarks/referee.py --recognizer onnx --jobs 2 --threads 1 --faint --cards-cache /tmp/cards
    .venv/bin/python benchmarks/referee.py --recognizer onnx --jobs 2 --threads 1 --faint --jokers-shown --films 1002

`--faint` passes the classifier's readings from 0.25 to the referee as faint ones (as the device does with
`reading.faint_from`), which it takes only where the rules settle them. `--cards-cache DIR` keeps the
recogniser's cards per film (readings from 0.25, so runs with and without `--faint` share it): a second
run over the same films with another referee only renders and referees (about half the time).
`--jokers-shown` shows the recogniser each film deck's jokers before the film, as a family shows the
device its deck's jokers once on a game night (`mayi-table learn-jokers`; a cache of its own). Its cards'
named corners are grouped into cards anew on each run, so the cache serves other grouping rules too.
The still view (a still table is read once, as on the device) decides before the cache is asked, so
the cache only holds frames the recogniser read.

A round that comes out wrong is corrected as the host does on a game night, once the table is cleared
after it: the journal's wrong events of the round are undone, the true ones entered, its flags
dismissed, and the referee follows again. The round still counts as wrong, and each round after it is
measured on its own; `--no-host` leaves it uncorrected, so the referee waits for the host for the
rest of the game (every later round then counts as wrong too).

Frames the table reader skips as covered (an arm over the table) are not recognised: the device
recognises them and the reader drops their cards, so the journal is the same, sooner.
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import pickle
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "device"))

from mayi_table.rules.events import Deal, Event, GameStart  # noqa: E402
from mayi_table.rules.record import as_observed  # noqa: E402
from mayi_table.table.journal import Journal  # noqa: E402
from mayi_table.table.referee import Referee  # noqa: E402
from mayi_table.vision.classes import PhysicalCard  # noqa: E402
from mayi_table.vision.evaluate import JOKERS_SEED  # noqa: E402
from mayi_table.vision.pairing import pair_corners  # noqa: E402
from mayi_table.vision.render.faces import Design  # noqa: E402
from mayi_table.vision.render.game import ButtonPress, FilmFrame, GameFilm, oracle_cards  # noqa: E402
from mayi_table.vision.render.scene import render_jokers  # noqa: E402
from mayi_table.vision.table_reading import TableReader  # noqa: E402

Recognise = Callable[[FilmFrame], list[PhysicalCard]]


@dataclass
class RoundOutcome:
    profile: str
    seed: int
    round: int | str
    truth: dict[str, int]
    read: dict[str, int] | None
    flags: int
    corrected: bool = False  # the host corrected the journal after it

    @property
    def exact(self) -> bool:
        return self.read == self.truth


@dataclass
class FilmResult:
    rounds: list[RoundOutcome] = field(default_factory=list)
    frames: int = 0
    flags: int = 0
    seconds: float = 0.0


def play_film(
    film: GameFilm,
    recognise: Recognise,
    journal_path: Path,
    stable_frames: int = 3,
    on_round: Callable[[RoundOutcome], None] | None = None,
    on_flag: Callable[[str], None] | None = None,
    host: bool = True,
    faint_below: float = 0.0,
) -> FilmResult:
    """Run one film through reader and referee into a journal; compare each round with the truth.

    A flag counts for the true round being played when it was raised (from the round's deal to the
    table cleared after it), whatever round the referee believed it was in: a round the referee got
    wrong must be flagged while it is played or scored, not only somewhere earlier in the game.
    """
    t0 = time.perf_counter()
    journal = Journal(journal_path)
    start = GameStart(film.run.game.profile.name, (), film.seats)
    assert film.first_dealer is not None
    referee = Referee(journal, start, film.first_dealer, claim_window_s=film.claim_window_s, faint_below=faint_below)
    reader = TableReader(film.zones, stable_frames=stable_frames, faint_below=faint_below)
    out = FilmResult()
    truth = film.run.game.results
    # the true round (index into `truth`) at each count of true events
    round_of_events: list[int] = []
    k = -1
    for ev in film.run.events:
        if isinstance(ev, Deal):
            k += 1
        round_of_events.append(max(k, 0))
    observed = as_observed(film.run.events)  # as the host would enter it: no hidden cards
    deals = [i for i, ev in enumerate(observed) if isinstance(ev, Deal)]
    flags_in: list[int] = [0] * max(1, len(truth))
    current = 0
    reported = 0
    flags_seen = 0

    def report(upto: int) -> None:
        nonlocal reported
        results = referee.game.results
        while reported < min(upto, len(truth)):
            read = dict(results[reported].scores) if reported < len(results) else None
            oc = RoundOutcome(
                film.run.game.profile.name,
                film.seed,
                truth[reported].round,
                dict(truth[reported].scores),
                read,
                flags_in[reported],
            )
            if host and not oc.exact and reported + 1 < len(deals):
                host_corrects(journal, observed[: deals[reported + 1]])
                referee.resync()
                oc.corrected = True
            out.rounds.append(oc)
            if on_round:
                on_round(oc)
            reported += 1

    for item in film.items():
        if isinstance(item, ButtonPress):
            referee.on_press(item.seat, item.t, long=item.long)
        else:
            out.frames += 1
            true_round = round_of_events[min(item.truth_events, len(round_of_events) - 1)]
            if true_round != current:
                report(true_round)
                current = true_round
            # a frame the reader skips as covered is not recognised (the device reads it and drops it)
            snap = reader.feed(partial(recognise, item), item.image, item.t)
            if snap is not None:
                referee.on_snapshot(snap, item.t)
            referee.tick(item.t)
        new_flags = len(referee.flags) - flags_seen
        if on_flag:
            for note in referee.flags[flags_seen:]:
                on_flag(note.reason)
        flags_seen = len(referee.flags)
        if new_flags and current < len(flags_in):
            flags_in[current] += new_flags
    report(len(truth))
    out.flags = len(referee.flags)
    out.seconds = time.perf_counter() - t0
    journal.close()
    return out


def host_corrects(journal: Journal, truth: list[Event]) -> None:
    """What the host does at the tablet after a wrong round: undo the journal back to where it last
    agreed with the true game, enter the true events from there, and dismiss the open flags."""
    accepted = journal.events()
    agree = 1  # the game line is the benchmark's own
    while agree < min(len(accepted), len(truth)) and accepted[agree] == truth[agree]:
        agree += 1
    for _ in range(len(accepted) - agree):
        journal.undo(source="tablet")
    for ev in truth[agree:]:
        journal.append_event(ev, source="tablet")
    for f in journal.open_flags():
        journal.dismiss(f.seq, "corrected by the host", source="tablet")


class _ModelReader:
    """The recogniser on a film's frames; shown the film deck's jokers first where the run asks, as a
    family shows the device its deck's jokers once (`mayi-table learn-jokers`)."""

    def __init__(self, kind: str, model_dir: Path, threads: int | None, min_reading: float) -> None:
        from mayi_table.vision.recognize import Recognizer

        self.rec = Recognizer(model_dir, kind, threads=threads, min_confidence=min_reading)

    def show_jokers(self, design: Design) -> None:
        """Learn the deck's jokers from a frame of them alone (the frame `mayi-table evaluate
        --jokers-shown` learns from)."""
        self.rec.jokers = self.rec.learn_jokers([render_jokers(JOKERS_SEED, design).image])

    def __call__(self, frame: FilmFrame) -> list[PhysicalCard]:
        return self.rec.recognize(frame.image)


def _recogniser(
    kind: str, model_dir: Path, threads: int | None = None, min_reading: float = 0.5
) -> Recognise | _ModelReader:
    if kind == "oracle":
        return lambda frame: oracle_cards(frame.labels)
    return _ModelReader(kind, model_dir, threads, min_reading)


class _FrameReader:
    """The film frame being read, as a card reader of its image (a cache keys its answers by frame)."""

    def __init__(self, recognise: Recognise) -> None:
        self.recognise = recognise
        self.frame: FilmFrame | None = None

    def recognize(self, image: np.ndarray) -> list[PhysicalCard]:
        assert self.frame is not None and self.frame.image is image
        return self.recognise(self.frame)


def _still(recognise: Recognise) -> Recognise:
    """As the device runs it: a still table is read once (`StillView`). The view decides before any
    card cache is asked, so a cache only ever holds frames the recogniser really read."""
    from mayi_table.vision.still_view import StillView

    frames = _FrameReader(recognise)
    view = StillView(frames)

    def read(frame: FilmFrame) -> list[PhysicalCard]:
        frames.frame = frame
        return view.recognize(frame.image)

    return read


CACHE_FORMAT = 2  # 2: only frames the recogniser read (1 kept the still view's reused readings too)
CACHED_READING = 0.25  # a cache of cards keeps readings down to this, so runs from other levels share it


def _lowest_reading(args: argparse.Namespace) -> float:
    """The classifier's reading level the recogniser runs at (a card cache keeps fainter ones too)."""
    if args.faint or args.cards_cache is not None:
        return min(args.min_reading, CACHED_READING)
    return args.min_reading


def _cached(recognise: Recognise, path: Path) -> tuple[Recognise, Callable[[], None]]:
    """A recogniser whose answers are kept in `path` by frame content, and the call that saves them: a
    second run over the same film (another referee, the same model) then only renders and referees."""
    cards: dict[str, list[PhysicalCard]] = {}
    if path.exists():
        with path.open("rb") as f:
            kept = pickle.load(f)
        if isinstance(kept, dict) and kept.get("format") == CACHE_FORMAT:
            cards = kept["cards"]
        else:
            print(
                f"{path}: a card cache of an older format (it may hold readings reused for a frame that "
                "changed); starting it anew",
                file=sys.stderr,
            )
    start = len(cards)

    def read(frame: FilmFrame) -> list[PhysicalCard]:
        key = hashlib.blake2b(frame.image.tobytes(), digest_size=16).hexdigest()
        if key not in cards:
            cards[key] = recognise(frame)
            return cards[key]
        # the named corners are what the models give; they are grouped anew, so a cache made before a
        # change to the grouping still serves
        h, w = frame.image.shape[:2]
        return pair_corners([k for c in cards[key] for k in c.corners], (w, h))

    def save() -> None:
        if len(cards) > start:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            with tmp.open("wb") as f:
                pickle.dump({"format": CACHE_FORMAT, "cards": cards}, f)
            tmp.replace(path)

    return read, save


def _run_profile(
    profile: str, args: argparse.Namespace, size: tuple[int, int], recognise: Recognise | _ModelReader | None = None
) -> tuple[list[RoundOutcome], int, float]:
    """One profile's games: (round outcomes, frames, seconds); a process of its own opens its recogniser."""
    if recognise is None:
        recognise = _recogniser(args.recognizer, args.model_dir, args.threads, _lowest_reading(args))
    outcomes: list[RoundOutcome] = []
    frames = 0
    seconds = 0.0
    tmp = Path(tempfile.mkdtemp(prefix="mayi-referee-"))
    films = [int(v) for v in args.films.split(",") if v.strip()] if args.films else None
    done = 0
    game_no = 0
    while (done < args.min_rounds) if films is None else (game_no < len(films)):
        seed = args.seed * 1000 + game_no if films is None else films[game_no]
        film = GameFilm(
            profile,
            seed,
            size=size,
            held_out=args.held_out,
            steady_frames=args.stable_frames + 1,
            arm_frames=1,
            stop_after_round=args.rounds,
        )

        def flag_line(reason: str, seed: int = seed) -> None:
            print(f"{profile:8} game {seed:5} flag: {reason}", file=sys.stderr, flush=True)

        if args.jokers_shown and isinstance(recognise, _ModelReader):
            recognise.show_jokers(film.design)
        read, save = recognise, (lambda: None)
        if args.cards_cache is not None and args.recognizer != "oracle":
            name = f"{args.recognizer}-{profile}-{seed}-{size[0]}x{size[1]}{'-held-out' if args.held_out else ''}"
            name += "-jokers-shown" if args.jokers_shown else ""
            read, save = _cached(recognise, args.cards_cache / f"{name}-from{_lowest_reading(args)}.pkl")
        if args.recognizer != "oracle":
            read = _still(read)

        def reading(frame: FilmFrame, read: Recognise = read) -> list[PhysicalCard]:
            # with --faint the referee gets the fainter readings too, and knows them by their confidence
            return [
                c for c in read(frame) if c.confidence >= (_lowest_reading(args) if args.faint else args.min_reading)
            ]

        res = play_film(
            film,
            reading,
            tmp / f"{profile}-{seed}.sqlite3",
            args.stable_frames,
            on_round=_print_round,
            on_flag=flag_line if args.show_flags else None,
            host=args.host,
            faint_below=args.min_reading if args.faint else 0.0,
        )
        save()
        outcomes.extend(res.rounds)
        frames += res.frames
        seconds += res.seconds
        done += len(res.rounds)
        game_no += 1
    return outcomes, frames, seconds


def _print_round(oc: RoundOutcome) -> None:
    mark = "ok" if oc.exact else ("FLAGGED" if oc.flags else "SILENT MISMATCH")
    if oc.corrected:
        mark += ", host corrected"
    line = f"{oc.profile:8} game {oc.seed:5} round {oc.round!s:>2}: {mark:16} flags {oc.flags}"
    print(line, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--recognizer", choices=("oracle", "onnx", "ncnn"), default="oracle")
    ap.add_argument("--model-dir", type=Path, default=Path(__file__).resolve().parents[1] / "vision_models")
    ap.add_argument("--profiles", default="petras,classic")
    ap.add_argument("--min-rounds", type=int, default=20, help="rounds per profile (whole games are played)")
    ap.add_argument("--rounds", type=int, default=None, help="stop each game after this many rounds")
    ap.add_argument("--seed", type=int, default=1, help="games are films seed*1000, seed*1000+1, ...")
    ap.add_argument("--films", default=None, help="play exactly these film seeds (comma-separated), e.g. 8,11")
    ap.add_argument("--size", default=None, help="frame size WxH (default 960x540 oracle, 1920x1080 otherwise)")
    ap.add_argument("--held-out", action="store_true", help="deck designs never used in training")
    ap.add_argument("--stable-frames", type=int, default=3)
    ap.add_argument("--show-flags", action="store_true", help="print each flag's reason as it is raised")
    ap.add_argument("--jobs", type=int, default=1, help="profiles played side by side in this many processes")
    ap.add_argument("--threads", type=int, default=None, help="recogniser threads per process")
    ap.add_argument(
        "--min-reading",
        type=float,
        default=0.5,
        help="the classifier's readings below this are no card (the device's default: 0.5)",
    )
    ap.add_argument(
        "--faint",
        action="store_true",
        help=f"pass readings down to {CACHED_READING} to the referee as faint ones (it uses them where the rules"
        " settle them)",
    )
    ap.add_argument(
        "--cards-cache",
        type=Path,
        default=None,
        help="keep the recogniser's cards per film in this folder and reuse them (same model only)",
    )
    ap.add_argument(
        "--jokers-shown",
        action="store_true",
        help="show the recogniser each film deck's jokers first, as a family does once (learn-jokers)",
    )
    ap.add_argument(
        "--no-host",
        dest="host",
        action="store_false",
        help="nobody corrects a wrong round: the referee waits for the host for the rest of the game",
    )
    args = ap.parse_args(argv)
    if args.size:
        try:
            w, h = (int(v) for v in args.size.lower().split("x"))
        except ValueError:
            ap.error(f"--size must look like 1920x1080, not {args.size!r}")
    else:
        w, h = (960, 540) if args.recognizer == "oracle" else (1920, 1080)
    profiles = [p.strip() for p in args.profiles.split(",") if p.strip()]
    try:  # here, so that a missing model or backend is said before any work, without a traceback
        recognise = _recogniser(args.recognizer, args.model_dir, args.threads, _lowest_reading(args))
    except Exception as e:
        print(f"cannot load the {args.recognizer} recogniser from {args.model_dir}: {e}", file=sys.stderr)
        return 2
    jobs = [(profile, args, (w, h)) for profile in profiles]
    if args.jobs > 1:
        # spawned, not forked: each process opens its own recogniser
        with ProcessPoolExecutor(max_workers=args.jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            results = list(pool.map(_run_profile, *zip(*jobs)))
    else:
        results = [_run_profile(*job, recognise) for job in jobs]
    outcomes = [o for rounds, _, _ in results for o in rounds]
    frames = sum(f for _, f, _ in results)
    seconds = max(sec for _, _, sec in results) if args.jobs > 1 else sum(sec for _, _, sec in results)
    print()
    print(f"recogniser {args.recognizer}, frames {w}x{h}, {frames} frames in {seconds:.0f} s")
    head = f"{'profile':10}{'rounds':>8}{'exact':>8}{'share':>8}{'flagged':>9}{'silent':>8}{'flags':>7}"
    print(head)
    print("-" * len(head))
    silent_total = 0
    for profile in profiles:
        rs = [o for o in outcomes if o.profile == profile]
        exact = sum(o.exact for o in rs)
        flagged = sum((not o.exact) and o.flags > 0 for o in rs)
        silent = sum((not o.exact) and o.flags == 0 for o in rs)
        silent_total += silent
        share = exact / len(rs) if rs else 0.0
        print(f"{profile:10}{len(rs):>8}{exact:>8}{share:>8.1%}{flagged:>9}{silent:>8}{sum(o.flags for o in rs):>7}")
    print()
    if silent_total:
        print(f"FAIL: {silent_total} round(s) scored wrong without a flag")
        return 1
    print("every mismatching round was flagged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
