"""One rendered round through the oracle recogniser, the reader and the referee: the journal's
scores are the true round's, with no flag."""

from __future__ import annotations

from pathlib import Path

from mayi_table.demo import feed_film_item
from mayi_table.rules.events import GameStart
from mayi_table.table.journal import Journal
from mayi_table.table.referee import Referee
from mayi_table.vision.render.game import GameFilm
from mayi_table.vision.table_reading import TableReader


def test_one_rendered_round_scores_as_the_truth(tmp_path: Path) -> None:
    film = GameFilm("classic", 9, size=(960, 540), steady_frames=4, arm_frames=1, stop_after_round=1)
    journal = Journal(tmp_path / "j.sqlite3")
    assert film.first_dealer is not None
    referee = Referee(journal, GameStart("classic", (), film.seats), film.first_dealer)
    reader = TableReader(film.zones, stable_frames=3)
    for item in film.items():
        feed_film_item(item, referee, reader)
    game = journal.game
    assert game is not None and len(game.results) == 1
    assert game.results[0].scores == film.run.game.results[0].scores
    assert game.results[0].went_out == film.run.game.results[0].went_out
    assert not journal.open_flags()
    # the restarted referee follows from the same state
    rebuilt = Referee(journal, GameStart("classic", (), film.seats), film.first_dealer)
    assert rebuilt.game.state_dict() == referee.game.state_dict()
