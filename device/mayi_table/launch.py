"""Putting the device together: `mayi-table run --config FILE` and `mayi-table demo`.

Every part that can fail on a family's table (config, journal, web port, model, camera, GPIO) is
opened before the main loop and fails with one clear line and exit status 2.

A config whose camera is `rendered` (a bot game drawn by the renderer) keeps its film position beside
the journal, so a restarted device resumes the film where it was. Two environment variables, for
tests and demos of that camera only (the YAML config keeps to what a real table needs):
`MAYI_TABLE_RENDERED_ORACLE=1` reads the cards from the renderer's labels instead of loading the
model, and `MAYI_TABLE_RENDERED_ROUNDS=N` films only the first N rounds.
"""

from __future__ import annotations

import os
import signal
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .config import DEFAULT_FAINT_FROM, ConfigError, DeviceConfig, RenderedCamera, load_config
from .demo import FilmSource
from .hardware.camera import CameraError, ResilientCamera, camera_from_config
from .hardware.notify import Notifier, Watchdog
from .runtime import Device, setup_logging
from .table.hub import HubError, TableHub
from .vision.classes import CardReader
from .vision.offline import PROJECT_ROOT
from .vision.render.game import GameFilm
from .vision.table_reading import TableReader, Zones

Echo = Callable[[str], None]
ORACLE_ENV = "MAYI_TABLE_RENDERED_ORACLE"
ROUNDS_ENV = "MAYI_TABLE_RENDERED_ROUNDS"


class LaunchError(Exception):
    """A part of the device that cannot be started; the message says which and why."""


@dataclass
class Parts:
    hub: TableHub
    server: Any
    device: Device


def _model_dir(path: Path) -> Path:
    return path if path.is_absolute() or path.exists() else PROJECT_ROOT / path


def load_recognizer(
    model_dir: Path,
    backend: str,
    conf: float | None = None,
    threads: int | None = None,
    faint_from: float | None = None,
    four_index: bool | None = None,
    deshake: bool = True,
    jokers: Path | None = None,
) -> CardReader:
    """The recogniser as the device runs it; `faint_from`: pass on readings from this level;
    `four_index`: the deck's kind; `deshake`: read shaken frames' sharpened copies too; `jokers`: the
    deck's joker marks, when that file exists (see `ReadingConfig`)."""
    from .vision.detect import ModelError
    from .vision.jokers import JokerMarksError
    from .vision.recognize import Recognizer
    from .vision.still_view import StillView

    options: dict[str, Any] = {"threads": threads}
    if conf is not None:
        options["conf"] = conf
    if faint_from is not None:
        options["min_confidence"] = faint_from
    options["four_index"] = four_index
    options["deshake"] = deshake
    if jokers is not None and jokers.exists():
        options["jokers"] = jokers
    try:
        return StillView(Recognizer(_model_dir(model_dir), backend, **options))
    except (ModelError, JokerMarksError) as e:
        raise LaunchError(str(e)) from None


def jokers_status(path: Path) -> str:
    """The line the device says at start about the deck's jokers (read when the file exists)."""
    if path.exists():
        return f"the deck's jokers: shown ({path})"
    return "the deck's jokers: not shown; the classifier alone names jokers (mayi-table learn-jokers)"


def faint_below(faint_from: float | None) -> float:
    """The referee's faint level for a recogniser passing on readings from `faint_from`: the
    classifier's own threshold (none when nothing is passed on)."""
    from .vision.classes import MIN_CONFIDENCE

    return MIN_CONFIDENCE if faint_from is not None else 0.0


def open_hub(journal: Path) -> TableHub:
    from .table.journal import JournalError

    try:
        journal.parent.mkdir(parents=True, exist_ok=True)
        return TableHub(journal)
    except (JournalError, HubError, OSError) as e:
        raise LaunchError(f"cannot open the journal {journal}: {e}") from None


def start_web(hub: TableHub, pin: str, host: str, port: int) -> Any:
    from .web.app import create_app
    from .web.server import WebServer, WebServerError

    server = WebServer(create_app(hub, pin), host, port, hub=hub)
    try:
        server.start()
    except (WebServerError, OSError) as e:
        raise LaunchError(f"cannot serve the scoreboard on {host}:{port}: {e}") from None
    return server


def film_for(
    profile: str,
    seed: int,
    players: int,
    size: tuple[int, int],
    zones: Zones | None,
    seats: list[str] | None,
    held_out: bool = False,
    rounds: int | None = None,
) -> GameFilm:
    return GameFilm(
        profile, seed, players=players, zones=zones, size=size, seats=seats, held_out=held_out, stop_after_round=rounds
    )


def _stop_on_signals(device: Device, stopped: threading.Event | None = None) -> None:
    """SIGTERM and SIGINT stop the device (and set `stopped`, so the caller knows it was asked to)."""
    if threading.current_thread() is not threading.main_thread():
        return

    def stop(*_: Any) -> None:
        if stopped is not None:
            stopped.set()
        device.stop()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, stop)


def _rendered_options(env: Any = None) -> tuple[bool, int | None]:
    """(oracle, rounds) for a `rendered` camera, from the environment (see the module doc)."""
    environ = os.environ if env is None else env
    oracle = environ.get(ORACLE_ENV, "") not in ("", "0")
    text = environ.get(ROUNDS_ENV, "")
    try:
        rounds = int(text) if text else None
    except ValueError:
        raise LaunchError(f"{ROUNDS_ENV} is {text!r}, not a number of rounds") from None
    if rounds is not None and rounds < 1:
        raise LaunchError(f"{ROUNDS_ENV} is {rounds}; film at least one round")
    return oracle, rounds


def film_position_file(journal: Path) -> Path:
    """Where a `rendered` camera keeps its film position (beside the journal)."""
    return journal.with_name(journal.name + ".film-position")


def build_from_config(cfg: DeviceConfig, echo: Echo) -> Parts:
    """The device a config describes (camera, model, buttons, zones, journal, web)."""
    zones = Zones.from_mapping(cfg.zones)
    rendered_cam = cfg.camera if isinstance(cfg.camera, RenderedCamera) else None
    oracle, rounds = _rendered_options() if rendered_cam is not None else (False, None)
    recognizer: CardReader | None = None
    if not oracle:
        recognizer = load_recognizer(
            cfg.detector.model_dir,
            cfg.detector.backend,
            cfg.detector.conf,
            cfg.detector.threads,
            cfg.reading.faint_from,
            cfg.reading.four_index_deck,
            cfg.reading.deshake,
            cfg.reading.jokers,
        )
    hub = open_hub(cfg.journal.path)
    server: Any = None
    try:
        server = start_web(hub, cfg.host_pin, cfg.web.host, cfg.web.port)
        notifier = Notifier.from_env()
        film_source: FilmSource | None = None
        first_dealer: str | None = None
        if rendered_cam is not None:
            rc = rendered_cam
            if rc.players > len(cfg.seats):
                raise LaunchError(f"camera.players is {rc.players} but the config has {len(cfg.seats)} seats")
            names = [s.name for s in cfg.seats[: rc.players]]
            try:
                film = film_for(rc.profile, rc.seed, rc.players, (rc.width, rc.height), zones, names, rounds=rounds)
            except ValueError as e:
                raise LaunchError(f"cannot film the rendered game: {e}") from None
            position = film_position_file(cfg.journal.path)
            if hub.game is None:
                position.unlink(missing_ok=True)  # a new game: an old film's position means nothing
                hub.start_game(rc.profile, film.seats, first_dealer=film.first_dealer, source="tablet")
            film_source = FilmSource(
                film, speed=rc.speed, position_file=position, window_open=lambda: _window_open(hub)
            )
            first_dealer = film.first_dealer
            if oracle:
                recognizer = film_source.oracle()
                hub.update_device(recognizer_backend="oracle")

            def rendered(_: RenderedCamera) -> Any:
                assert film_source is not None
                return film_source

            camera = camera_from_config(cfg.camera, rendered=rendered)
        else:
            camera = camera_from_config(cfg.camera)
        assert recognizer is not None
        faint = faint_below(cfg.reading.faint_from if not oracle else None)
        device = Device(
            hub=hub,
            camera=camera,
            recognizer=recognizer,
            first_dealer=first_dealer,
            reader_factory=lambda: TableReader(
                zones,
                stable_frames=cfg.reading.stable_frames,
                inertia=cfg.reading.inertia,
                min_confidence=cfg.reading.min_confidence,
                faint_below=faint,
            ),
            faint_below=faint,
            notifier=notifier,
            watchdog=Watchdog.from_env(notifier),
            claim_window_s=cfg.claims.window_s,
            **(film_source.device_options() if film_source else {}),
        )
        if film_source is None:
            device.panel = _open_panel(cfg, device)
    except BaseException:
        if server is not None:
            server.stop()  # else its thread serves on with the journal closed
        hub.close()
        raise
    if not oracle:
        hub.update_device(recognizer_backend=cfg.detector.backend)
        echo(jokers_status(cfg.reading.jokers))
    echo(f"scoreboard: {server.url}/   host tablet: {server.url}/host")
    return Parts(hub, server, device)


def _window_open(hub: TableHub) -> bool:
    """Whether the journal ends with a discard: its claim window was open when the last process stopped."""
    history = hub.history(public=True)
    return bool(history) and (history[-1].get("event") or {}).get("type") == "discard"


def _open_panel(cfg: DeviceConfig, device: Device) -> Any:
    from .hardware.buttons import ButtonsError, SeatPanel

    try:
        return SeatPanel(
            cfg.seats,
            on_press=lambda seat, t: device.press(seat, t),
            on_long_press=lambda seat, t: device.press(seat, t, long=True),
            long_press_s=cfg.claims.long_press_s,
        )
    except ButtonsError as e:
        raise LaunchError(str(e)) from None
    except Exception as e:  # noqa: BLE001 - gpiozero finds no GPIO on a machine that is not a Pi
        raise LaunchError(
            f"cannot reach the seat buttons ({type(e).__name__}: {e}); on a machine without GPIO use "
            "`mayi-table demo`, or a config with camera source `rendered`"
        ) from None


def run_parts(parts: Parts) -> int:
    _stop_on_signals(parts.device)
    try:
        return parts.device.run()
    finally:
        parts.server.stop()
        parts.hub.close()


def run_main(config: Path, check_only: bool, echo: Echo, log_level: str = "info") -> int:
    """`mayi-table run`: the exit status."""
    try:
        cfg = load_config(config)
    except ConfigError as e:
        echo(f"error: {e}")
        return 2
    if check_only:
        echo(
            f"{config}: OK (profile {cfg.profile}, {len(cfg.seats)} seats, camera {cfg.camera.source}, "
            f"detector {cfg.detector.backend})"
        )
        return 0
    setup_logging(log_level)
    try:
        parts = build_from_config(cfg, echo)
    except (LaunchError, CameraError, HubError) as e:
        echo(f"error: {e}")
        return 2
    return run_parts(parts)


def demo_main(
    *,
    profile: str,
    seed: int,
    players: int,
    host: str,
    port: int,
    speed: float,
    backend: str,
    model_dir: Path,
    journal: Path | None,
    pin: str,
    exit_at_end: bool,
    oracle: bool,
    held_out: bool,
    echo: Echo,
    rounds: int | None = None,
    log_level: str = "warning",
) -> int:
    """`mayi-table demo`: a bot game rendered frame by frame through the device; the exit status."""
    setup_logging(log_level)
    folder = Path(tempfile.mkdtemp(prefix="mayi-demo-"))
    journal = journal or folder / "journal.sqlite3"
    try:
        film = film_for(profile, seed, players, (1920, 1080), None, None, held_out=held_out, rounds=rounds)
        source = FilmSource(film, speed=speed)
        recognizer: CardReader = (
            source.oracle() if oracle else load_recognizer(model_dir, backend, faint_from=DEFAULT_FAINT_FROM)
        )
        hub = open_hub(journal)
    except (LaunchError, ValueError) as e:
        echo(f"error: {e}")
        return 2
    try:
        server = start_web(hub, pin, host, port)
        if hub.game is None:
            hub.start_game(profile, film.seats, first_dealer=film.first_dealer, source="tablet")
    except (LaunchError, HubError) as e:
        hub.close()
        echo(f"error: {e}")
        return 2
    hub.update_device(recognizer_backend="oracle" if oracle else backend)
    faint = faint_below(DEFAULT_FAINT_FROM if not oracle else None)
    device = Device(
        hub=hub,
        camera=ResilientCamera(source, ends=True),
        recognizer=recognizer,
        reader_factory=lambda: TableReader(film.zones, faint_below=faint),
        faint_below=faint,
        **source.device_options(),
        first_dealer=film.first_dealer,
    )
    echo(f"May I? Table demo: {profile}, {players} players, seed {seed}, {len(film)} moments to film")
    echo(f"scoreboard: {server.url}/   host tablet: {server.url}/host (PIN {pin})   journal: {journal}")
    interrupted = threading.Event()
    _stop_on_signals(device, interrupted)
    try:
        code = device.run()
        result = hub.snapshot()
        totals = (result.get("game") or {}).get("totals") or {}
        echo(
            f"demo {'stopped' if interrupted.is_set() else 'game over'}: {device.stats.frames_processed} frames, "
            f"totals {totals}, open flags {len(hub.flags(open_only=True))}"
        )
        if not exit_at_end and code == 0 and not interrupted.is_set():
            echo("still serving the scoreboard; Ctrl-C to stop")
            stop = threading.Event()
            if threading.current_thread() is threading.main_thread():
                for sig in (signal.SIGTERM, signal.SIGINT):
                    signal.signal(sig, lambda *_: stop.set())
            while not stop.wait(0.5):
                pass
        return code
    finally:
        server.stop()
        hub.close()
