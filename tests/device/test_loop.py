"""The device's main loop over a rendered round (FilmSource + OracleReader): it journals what the
referee journals when fed the film directly, and talks to systemd as a Type=notify service should."""

from __future__ import annotations

from pathlib import Path

from mayi_table.demo import FilmSource
from mayi_table.hardware.camera import ResilientCamera
from mayi_table.hardware.notify import Notifier, Watchdog
from mayi_table.rules.events import Buy, Discard, GameStart
from mayi_table.runtime import Device
from mayi_table.table.hub import TableHub
from mayi_table.table.journal import Journal
from mayi_table.table.referee import Referee
from mayi_table.vision.render.game import ButtonPress, GameFilm, oracle_cards

from .conftest import PROFILE, SEATS, SEED, ZONES, DirectRun, NotifyListener, journal_events, reader, round_film


def test_device_journals_the_round_as_the_referee_does(tmp_path: Path, direct_run: DirectRun) -> None:
    film = round_film()
    listener = NotifyListener(tmp_path / "notify.sock")
    hub = TableHub(tmp_path / "device.sqlite3")
    try:
        hub.start_game(PROFILE, film.seats, first_dealer=film.first_dealer)
        source = FilmSource(film, speed=100)
        notifier = Notifier(listener.path)
        device = Device(
            hub=hub,
            camera=ResilientCamera(source, ends=True),
            recognizer=source.oracle(),
            reader_factory=reader,
            notifier=notifier,
            watchdog=Watchdog(notifier, 0.02),
            **source.device_options(),
            annotate_view=False,
        )
        code = device.run()
    finally:
        hub.close()
        listener.close()
    assert code == 0 and device.error is None
    events, state, flags = journal_events(tmp_path / "device.sqlite3")
    assert events == direct_run.events
    assert state == direct_run.state
    assert flags == 0
    assert any(e["type"] == "buy" for e in events)  # a claim window decided by the film's clock

    kinds = [m.split("\n")[0] for _, m in listener.messages]
    ready = listener.with_line("READY=1")
    pings = listener.with_line("WATCHDOG=1")
    assert len(ready) == 1
    assert 1 <= len(pings) <= device.stats.frames_processed
    assert all(t >= ready[0] for t in pings)  # the first ping comes once frames flow, after READY
    assert kinds[-1] == "STOPPING=1" and kinds.count("STOPPING=1") == 1


def test_film_source_keeps_the_films_clock_and_does_not_press_twice(tmp_path: Path) -> None:
    film = GameFilm(PROFILE, SEED, zones=ZONES, size=(320, 180), seats=SEATS, stop_after_round=1)
    whole = [("press", it.seat, it.t) if isinstance(it, ButtonPress) else ("frame", "", it.t) for it in film.items()]
    source = FilmSource(film, speed=1e6)
    source.open()
    played: list[tuple[str, str, float]] = []
    while (frame := source.read()) is not None:
        played += [("press", seat, t) for seat, t, _ in source.presses_before(frame)]
        played.append(("frame", "", frame.t))
    played += [("press", seat, t) for seat, t, _ in source.presses_before(None)]
    # one moment at a time, on the clock of the whole film (a claim window spans moments)
    assert [k for k, _, _ in played] == [k for k, _, _ in whole]
    assert [s for _, s, _ in played] == [s for _, s, _ in whole]
    assert all(abs(a[2] - b[2]) < 1e-9 for a, b in zip(played, whole))

    # a restart in the buy's moment, after the device handled the buy's press: no second press
    k = next(i for i, m in enumerate(film.moments) if isinstance(m.event, Buy))
    position = tmp_path / "position"
    position.write_text(f"{k} 1\n")
    resumed = FilmSource(film, speed=1e6, position_file=position)
    resumed.open()
    frame = resumed.read()
    assert frame is not None and resumed.presses_before(frame) == []
    assert frame.t > film.claim_window_s  # not restarted from 0
    resumed.processed(frame)
    assert position.read_text().split() == [str(k), "1"]
    position.write_text(f"{k} 0\n")  # not handled before the restart: it comes again
    again = FilmSource(film, speed=1e6, position_file=position)
    again.open()
    frame = again.read()
    assert frame is not None and [p[0] for p in again.presses_before(frame)] == [film.moments[k].presses[0].seat]
    # handled, but the claim window was still open when the process died (the journal ends with the
    # discard): nothing decided it, so the press comes again
    position.write_text(f"{k} 1\n")
    reopened = FilmSource(film, speed=1e6, position_file=position, window_open=lambda: True)
    reopened.open()
    frame = reopened.read()
    assert frame is not None and [p[0] for p in reopened.presses_before(frame)] == [film.moments[k].presses[0].seat]


def test_a_restarted_referee_reopens_the_claim_window_of_the_last_discard(tmp_path: Path) -> None:
    """Killed between the discard and the buy: the buyer's press after the restart still buys."""
    film = GameFilm(PROFILE, SEED, zones=ZONES, size=(640, 360), seats=SEATS, arm_frames=1, stop_after_round=1)
    assert film.first_dealer is not None
    start = GameStart(PROFILE, (), film.seats)
    journal = Journal(tmp_path / "j.sqlite3")
    referee = Referee(journal, start, film.first_dealer)
    rd = reader()
    restarted = False
    for item in film.items():
        r = referee.game.round
        if not restarted and r is not None and r.pile and referee.claims.window is not None:
            nxt = film.run.events[referee.game.events] if referee.game.events < len(film.run.events) else None
            if isinstance(nxt, Buy) and r.last_buyer is None and not r.drawn:
                # the process dies with the window open: a new referee and reader on the same journal
                assert isinstance(film.run.events[referee.game.events - 1], Discard)
                referee = Referee(journal, start, film.first_dealer)
                rd = reader()
                restarted = True
        if isinstance(item, ButtonPress):
            referee.on_press(item.seat, item.t, long=item.long)
            continue
        snap = rd.feed(oracle_cards(item.labels), item.image, item.t)
        if snap is not None:
            referee.on_snapshot(snap, item.t)
        referee.tick(item.t)
    assert restarted
    game = journal.game
    assert game is not None and len(game.results) == 1
    bought = [(ev.seat, ev.source) for ev in journal.events() if isinstance(ev, Buy)]
    assert bought == [(ev.seat, "button") for ev in film.run.events if isinstance(ev, Buy)]
    assert game.results[0].scores == film.run.game.results[0].scores
    assert not journal.open_flags()
    journal.close()
