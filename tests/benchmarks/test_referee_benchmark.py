"""The end-to-end referee benchmark (`benchmarks/referee.py`): its simulated host corrects a wrong
round in the journal, so that each later round is measured on its own."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from mayi_table.rules.events import Deal, Discard
from mayi_table.rules.record import as_observed
from mayi_table.rules.simulate import play_game
from mayi_table.table.journal import Journal
from mayi_table.vision.classes import PhysicalCard
from mayi_table.vision.render.game import FilmFrame, GameFilm, oracle_cards

from .scripts import load_benchmark


def _bench():  # type: ignore[no-untyped-def]
    return load_benchmark("referee")


def test_the_host_undoes_what_went_wrong_and_enters_the_truth(tmp_path: Path) -> None:
    bench = _bench()
    truth = as_observed(play_game("classic", 4, 5, stop_after_round=2).events)  # as the camera records it
    deals = [i for i, ev in enumerate(truth) if isinstance(ev, Deal)]
    end1 = deals[1]  # round 1's events end where round 2 is dealt
    journal = Journal(tmp_path / "j.sqlite3")
    # the journal agrees up to a discard, then holds a misread one and what followed it
    k = next(i for i in range(5, end1) if isinstance(truth[i], Discard))
    for ev in truth[:k]:
        journal.append_event(ev)
    misread = "2C" if truth[k].card != "2C" else "3C"
    journal.append_event(dataclasses.replace(truth[k], card=misread))
    journal.append_event(truth[k + 1])
    journal.flag(None, "a card appeared that no move explains")
    assert journal.events() != truth[: k + 2]
    bench.host_corrects(journal, truth[:end1])
    assert journal.events() == truth[:end1]
    assert not journal.open_flags()
    # a journal ahead of the truth (round 2 dealt on a misread) is undone back to it
    journal.append_event(truth[end1])
    bench.host_corrects(journal, truth[:end1])
    assert journal.events() == truth[:end1]


def test_after_a_wrong_round_the_next_is_measured_on_its_own(tmp_path: Path) -> None:
    bench = _bench()
    film = GameFilm("classic", 9, size=(960, 540), steady_frames=4, arm_frames=1, stop_after_round=2)
    deals = [i for i, ev in enumerate(film.run.events) if isinstance(ev, Deal)]

    def misread_round_one(frame: FilmFrame) -> list[PhysicalCard]:
        cards = oracle_cards(frame.labels)
        if frame.truth_events <= deals[1] // 2:  # every card of round 1's first half read as the ace of spades
            cards = [dataclasses.replace(c, card="AS") for c in cards]
        return cards

    with_host = bench.play_film(film, misread_round_one, tmp_path / "host.sqlite3", 3)
    assert [(o.exact, o.corrected) for o in with_host.rounds] == [(False, True), (True, False)]
    assert with_host.rounds[0].flags > 0
    alone = bench.play_film(film, misread_round_one, tmp_path / "alone.sqlite3", 3, host=False)
    assert [o.exact for o in alone.rounds] == [False, False]


def test_the_model_reader_is_shown_the_film_decks_jokers_as_a_family_shows_them() -> None:
    """`--jokers-shown`: before a film, the recogniser learns the film deck's jokers from a frame of
    them alone (as `mayi-table learn-jokers` does on a game night), with its own classifier."""
    bench = _bench()
    models = Path(__file__).resolve().parents[2] / "vision_models"
    reader = bench._ModelReader("onnx", models, 1, 0.25)
    assert reader.rec.jokers is None
    film = GameFilm("classic", 9, size=(960, 540), steady_frames=4, arm_frames=1, stop_after_round=1)
    reader.show_jokers(film.design)
    assert reader.rec.jokers is not None
    assert reader.rec.jokers.classifier == reader.rec.classifier_id
    assert len(reader.rec.jokers.features) >= 2  # both jokers' marks at least
