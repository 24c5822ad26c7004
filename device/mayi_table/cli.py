"""The `mayi-table` command."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, List

import typer

from .rules.profiles import PROFILES, VARIANTS, ProfileError, check_players, make_profile

app = typer.Typer(
    help="May I? Table: referee and scoreboard for the contract rummy May I?.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class _Quiet:
    def update(self, n: int) -> None:
        pass


@contextmanager
def progress(total: int, label: str) -> Iterator[Any]:
    """A progress bar on the terminal's standard error; silent when output is piped."""
    if not sys.stderr.isatty():
        yield _Quiet()
        return
    with typer.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield bar


def _fail(message: str, code: int = 2) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@app.command()
def replay(
    file: Path = typer.Argument(..., help="A .mayi.jsonl game record ('-' reads standard input)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result object of GAME_RECORD.md."),
) -> None:
    """Check a game record against its rules and print the scores (exit 1 at the first illegal line)."""
    from .rules.record import replay_file, replay_lines, score_sheet

    if str(file) == "-":
        result, _ = replay_lines(sys.stdin)
    elif not file.is_file():
        result = {"ok": False, "error": {"line": 0, "message": f"cannot read {file}: no such file"}}
    else:
        result, _ = replay_file(file)
    if as_json:
        typer.echo(json.dumps(result, ensure_ascii=False))
    else:
        typer.echo(score_sheet(result))
    if not result["ok"]:
        raise typer.Exit(1)


@app.command()
def simulate(
    profile: str = typer.Option("petras", help=f"Rule profile: {', '.join(PROFILES)}."),
    players: int = typer.Option(4, help="Number of seats."),
    games: int = typer.Option(100, min=1, help="Games to play."),
    seed: int = typer.Option(0, help="Seed; the same seed plays the same games."),
    variant: List[str] | None = typer.Option(None, help=f"Classic variant, repeatable: {', '.join(VARIANTS)}."),
    strategy: List[str] | None = typer.Option(None, help="Bot strategies given to seats in turn (planner, chancer)."),
    records: Path | None = typer.Option(None, help="Write each game's .mayi.jsonl record into this folder."),
    as_json: bool = typer.Option(False, "--json", help="Print the statistics as one JSON object."),
) -> None:
    """Play bot games under the rules and print statistics."""
    from .rules.bots import STRATEGIES
    from .rules.record import write_record
    from .rules.simulate import play_game, statistics_of

    variants = tuple(variant or ())
    strategies = tuple(strategy or ("planner", "chancer"))
    try:
        p = make_profile(profile, variants)
        check_players(p, players)
    except ProfileError as e:
        _fail(str(e))
    for s in strategies:
        if s not in STRATEGIES:
            _fail(f"unknown strategy {s!r}; choose from {', '.join(STRATEGIES)}")
    if records is not None:
        records.mkdir(parents=True, exist_ok=True)
    runs = []
    with progress(games, "playing") as bar:
        for i in range(games):
            run = play_game(profile, players, seed * 1_000_003 + i, variants, strategies)
            runs.append(run)
            if records is not None:
                write_record(run.events, records / f"game-{seed}-{i:04d}.mayi.jsonl")
            bar.update(1)
    stats = statistics_of(runs).as_dict()
    stats.update({"profile": profile, "variants": list(variants), "players": players, "seed": seed})
    if as_json:
        typer.echo(json.dumps(stats))
        return
    typer.echo(
        f"{games} games of {profile}{' + ' + ', '.join(variants) if variants else ''}, {players} players, seed {seed}"
    )
    typer.echo(f"  winner's total   mean {stats['winner_total_mean']:.1f}   median {stats['winner_total_median']:.1f}")
    typer.echo(f"  mean round score {stats['mean_round_score']:.1f}")
    typer.echo(f"  buys per round   {stats['buys_per_round']:.2f}")
    typer.echo(f"  rounds with no winner {stats['rounds_without_winner']} of {stats['rounds']}")
    if stats["tiebreak_rounds"]:
        typer.echo(f"  tie-break rounds {stats['tiebreak_rounds']}")


STAGES = ("corners", "index")
STAGE_HELP = "corners: the corner-index detector; index: the classifier that names each detected index."


def _stage_defaults(stage: str) -> dict[str, Path]:
    if stage not in STAGES:
        _fail(f"unknown stage {stage!r} (choose one of {', '.join(STAGES)})")
    recipe = "recipe.yaml" if stage == "corners" else "index_recipe.yaml"
    return {"data": Path("data") / stage, "run": Path("runs") / stage, "recipe": Path("vision_models") / recipe}


@app.command()
def dataset(
    stage: str = typer.Option("corners", help=STAGE_HELP),
    out: Path | None = typer.Option(None, help="Folder to write into (default: data/<stage>)."),
    scenes: int | None = typer.Option(None, help="Rendered training tables (default: the recipe's)."),
    val_scenes: int | None = typer.Option(None, help="Rendered validation tables (default: the recipe's)."),
    seed: int | None = typer.Option(None, help="Seed; the same seed renders the same data."),
    recipe: Path | None = typer.Option(None, help="Training recipe YAML (default: the stage's in vision_models/)."),
    designs: str = typer.Option(
        "procedural",
        help="Training deck designs, groups joined by commas: procedural (the first 24), variants (18 more: "
        "large bold indices, every joker mark, four-index faces), themes (Debian card themes, installed), "
        "fonts (40 more in the training fonts, installed), crowded (16 more with big pips against the "
        "index); all is procedural,themes.",
    ),
    zoomed_share: float | None = typer.Option(None, help="Share of tables framed closer (default: the recipe's)."),
    spread_share: float | None = typer.Option(
        None, help="Share of scenes that are hand spreads instead of tables (default: the recipe's)."
    ),
    joker_share: float | None = typer.Option(
        None, help="Share of cards made jokers, to see every design's joker often (default: the recipe's, or 0)."
    ),
    mine_with: Path | None = typer.Option(
        None,
        help="Index stage: also crop where this model folder's corner detector (onnx) finds indices, "
        "so the classifier learns the detector's framing and false alarms.",
    ),
    shard: str = typer.Option(
        "0/1", help="I/K: render only every K-th scene from the I-th, to build with K processes side by side."
    ),
) -> None:
    """Render training data for the card recogniser (resumes an interrupted build)."""
    from .vision.dataset import DatasetSpec, build_dataset
    from .vision.index_crops import build_index_dataset
    from .vision.train import load_recipe

    defaults = _stage_defaults(stage)
    out, recipe = out or defaults["data"], recipe or defaults["recipe"]
    try:
        part, parts = (int(v) for v in shard.split("/"))
    except ValueError:
        part, parts = -1, 0
    if not 0 <= part < parts:
        _fail(f"--shard {shard}: give I/K with 0 <= I < K, as 0/2 and 1/2")
    try:
        conf = dict(load_recipe(recipe).get("dataset", {}))
    except ValueError as e:
        _fail(str(e))
    chosen_settings = (
        ("scenes", scenes),
        ("val_scenes", val_scenes),
        ("seed", seed),
        ("zoomed_share", zoomed_share),
        ("spread_share", spread_share),
        ("joker_share", joker_share),
    )
    for key, value in chosen_settings:
        if value is not None:
            conf[key] = value
    for key in ("zoomed_share", "spread_share", "joker_share"):
        if key in conf and not (isinstance(conf[key], (int, float)) and 0 <= conf[key] <= 1):
            _fail(f"{key.replace('_', '-')} {conf[key]!r}: give a share from 0 to 1")
    from .vision.render.faces import CROWDED_DESIGNS, TRAIN_DESIGNS, VARIANT_DESIGNS, font_variant_designs
    from .vision.render.themes import theme_split

    groups: set[str] = set()
    for group in designs.split(","):
        groups |= {"procedural", "themes"} if group.strip() == "all" else {group.strip()}
    design_groups = ("procedural", "variants", "themes", "fonts", "crowded")
    if groups - set(design_groups):
        _fail(f"--designs {designs}: groups are {', '.join(design_groups)} (or all), joined by commas")
    chosen = list(TRAIN_DESIGNS) if "procedural" in groups else []
    chosen += list(VARIANT_DESIGNS) if "variants" in groups else []
    chosen += list(CROWDED_DESIGNS) if "crowded" in groups else []
    if "fonts" in groups:
        fonts = font_variant_designs()
        if not fonts:
            _fail("no training fonts installed: run vision_models/install_card_themes.sh (make train-deps)")
        chosen += fonts
    if "themes" in groups:
        themes = theme_split()[0]
        if not themes:
            _fail("no Debian card themes installed: run vision_models/install_card_themes.sh (make train-deps)")
        chosen += themes
    if mine_with is not None and stage != "index":
        _fail("--mine-with is for the index stage")
    if stage == "index":
        known = {"scenes", "val_scenes", "seed", "zoomed_share", "spread_share", "joker_share"}
        if set(conf) - known:
            _fail(f"{recipe}: unknown dataset setting(s) {', '.join(sorted(set(conf) - known))}")
        detector = None
        if mine_with is not None:
            from .vision.detect import Detector, ModelError
            from .vision.index_crops import MINING_CONF

            try:
                found = Detector(mine_with, "onnx", conf=MINING_CONF, agnostic=True)
            except ModelError as e:
                _fail(str(e))
            detector = lambda image: [c.box for c in found.detect(image)]  # noqa: E731
        total = int(conf.get("scenes", 1500)) + int(conf.get("val_scenes", 100))
        with progress(len(range(part, total, parts)), "rendering") as bar:
            written = build_index_dataset(
                out, **conf, designs=chosen, progress=bar.update, detector=detector, shard=(part, parts)
            )
        typer.echo(f"wrote {written}")
        return
    try:
        spec = DatasetSpec(**conf)
    except TypeError as e:
        _fail(f"{recipe}: unknown dataset setting ({e})")
    with progress(len(range(part, spec.scenes + spec.val_scenes, parts)), "rendering") as bar:
        data = build_dataset(out, spec, designs=chosen, progress=bar.update, shard=(part, parts))
    typer.echo(f"wrote {data}")


@app.command()
def train(
    stage: str = typer.Option("corners", help=STAGE_HELP),
    data: Path | None = typer.Option(
        None, help="Data written by `mayi-table dataset` (default: data/corners/data.yaml or data/index)."
    ),
    run: Path | None = typer.Option(None, help="Run folder, checkpoints in run/weights/ (default: runs/<stage>)."),
    epochs: int | None = typer.Option(None, help="Epochs (default: the recipe's)."),
    resume: bool = typer.Option(False, "--resume", help="Carry on from run/weights/last.pt."),
    export_to: Path = typer.Option(Path("vision_models"), help="Copy the best weights here and export ONNX and NCNN."),
    no_export: bool = typer.Option(False, "--no-export", help="Train only; leave the exported models as they are."),
    recipe: Path | None = typer.Option(None, help="Training recipe YAML (default: the stage's in vision_models/)."),
    init_from: Path | None = typer.Option(None, help="Start a new run from these weights instead of from scratch."),
    device: str = typer.Option("cpu", help="cpu, or a CUDA device number (0) on a machine with a GPU."),
) -> None:
    """Train the corner-index detector or the index classifier from its YAML, offline, resumable."""
    from .vision import train as training

    defaults = _stage_defaults(stage)
    run, recipe = run or defaults["run"], recipe or defaults["recipe"]
    data = data or (defaults["data"] / "data.yaml" if stage == "corners" else defaults["data"])
    if not data.exists() or (stage == "index" and not (data / "train").is_dir()):
        _fail(f"{data} does not exist; build it first with `mayi-table dataset --stage {stage}`")
    if init_from is not None and not init_from.is_file():
        _fail(f"{init_from} does not exist")
    try:
        training.load_recipe(recipe)
    except ValueError as e:
        _fail(str(e))
    best = training.train(data, run, epochs=epochs, resume=resume, recipe=recipe, init_from=init_from, device=device)
    typer.echo(f"best weights: {best}")
    if not no_export:
        imgsz = int(training.load_recipe(recipe)["train"].get("imgsz", 320))
        paths = training.export(best, export_to, imgsz=imgsz, stem=stage)
        for kind, path in paths.items():
            typer.echo(f"{kind}: {path}")


@app.command("pack-crops")
def pack_crops(
    builds: list[Path] = typer.Argument(..., help="Index builds (`mayi-table dataset --stage index --out ...`)."),
    out: Path = typer.Option(..., help="The archive to write (.npz)."),
    train_quality: int = typer.Option(50, help="WebP quality of training crops."),
    val_quality: int = typer.Option(80, help="WebP quality of validation crops."),
) -> None:
    """Merge index builds into one file of WebP crops, to carry to a training machine."""
    from .vision.crop_pack import PackError, list_crops
    from .vision.crop_pack import pack_crops as pack

    try:
        total = sum(len(list_crops(b)) for b in builds)
        with progress(total, "packing") as bar:
            summary = pack(builds, out, train_quality, val_quality, progress=bar.update)
    except PackError as e:
        _fail(str(e))
    crops = ", ".join(f"{n} {split}" for split, n in summary.crops.items())
    typer.echo(f"wrote {out}: {crops} crops of {summary.classes} classes, {summary.bytes / 2**20:.1f} MiB")


@app.command("unpack-crops")
def unpack_crops(
    pack: Path = typer.Argument(..., help="An archive written by `mayi-table pack-crops`."),
    out: Path = typer.Option(..., help="Folder to write train/<class>/ and val/<class>/ into."),
) -> None:
    """Lay out a crop archive as the folders `mayi-table train --stage index --data` reads."""
    from .vision.crop_pack import PackError, open_pack
    from .vision.crop_pack import unpack_crops as unpack

    if not pack.is_file():
        _fail(f"{pack} does not exist")
    try:
        arrays = open_pack(pack)
    except PackError as e:
        _fail(str(e))
    with progress(len(arrays["names"]), "unpacking") as bar:
        counts = unpack(arrays, out, progress=bar.update)
    typer.echo(f"wrote {out}: " + ", ".join(f"{n} {split}" for split, n in counts.items()) + " crops")


@app.command()
def evaluate(
    model: Path = typer.Option(Path("vision_models"), help="Model folder (corners.pt / .onnx / _ncnn_model)."),
    backend: str = typer.Option("onnx", help="Detector backend: ultralytics, onnx or ncnn."),
    scenes: int = typer.Option(30, min=0, help="Rendered held-out tables to score."),
    spreads: int = typer.Option(100, min=0, help="Rendered hand spreads to score."),
    real_photos: Path | None = typer.Option(
        None, help="Folder of real photos with VOC boxes (default: ../shared/real_photos/edje_train if present)."
    ),
    seed: int = typer.Option(777, help="Seed of the held-out scenes."),
    designs: str = typer.Option(
        "all", help="Held-out deck designs: procedural, themes (Debian card themes, when installed) or all."
    ),
    four_index: bool | None = typer.Option(
        None,
        "--four-index/--two-index",
        help="Read every deck as printing its index in all four corners, or in two (default: as each image shows it).",
    ),
    deshake: bool = typer.Option(
        True, "--deshake/--no-deshake", help="Read frames blurred by a shaken camera in a sharpened copy too."
    ),
    jokers_shown: bool = typer.Option(
        False,
        "--jokers-shown",
        help="Show the recogniser each held-out design's jokers first, as a family does once (learn-jokers).",
    ),
    tens_reader: bool = typer.Option(
        True,
        "--tens-reader/--no-tens-reader",
        help="Ask the model folder's tens reader (index_tens) where the classifier is unsure, when it has one.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Score the recogniser on held-out deck designs, hand spreads and real photos."""
    from .vision.detect import ModelError
    from .vision.evaluate import (
        evaluate_real_photos,
        evaluate_scenes,
        evaluate_spreads,
        held_out_designs,
        learn_held_out_jokers,
    )
    from .vision.offline import PROJECT_ROOT
    from .vision.recognize import Recognizer, load_image

    if real_photos is not None and not real_photos.is_dir():
        _fail(f"{real_photos} is not a folder", 1)
    try:
        held_out = held_out_designs(designs)
    except ValueError:
        _fail("--designs is procedural, themes or all", 1)
    if not held_out:
        _fail("no held-out theme designs: install them with vision_models/install_card_themes.sh", 1)
    try:
        reader = Recognizer(model, backend, four_index=four_index, deshake=deshake, tens_reader=tens_reader)
    except ModelError as e:
        _fail(str(e), 1)
    out: dict[str, Any] = {"model": str(model), "backend": backend, "designs": [d.name for d in held_out]}
    out["tens_reader"] = bool(reader.classifier and reader.classifier.tens)
    jokers = learn_held_out_jokers(reader, held_out) if jokers_shown and (scenes or spreads) else None
    out["jokers_shown"] = jokers is not None
    if scenes:
        with progress(scenes, "held-out scenes") as bar:
            score = evaluate_scenes(reader, scenes, seed=seed, designs=held_out, progress=bar.update, jokers=jokers)
        out["scenes"] = {"count": scenes, **score.total.as_dict(), "partial_reads": score.partial_reads}
        out["scenes"].update(score.breakdown())
        out["per_card_f1"] = {c: round(k.f1, 4) for c, k in sorted(score.per_card.items())}
    if spreads:
        with progress(spreads, "hand spreads") as bar:
            out["spreads"] = evaluate_spreads(
                reader, spreads, seed=seed + 1, designs=held_out, progress=bar.update, jokers=jokers
            )
    reader.jokers = None  # the real photos show many decks: no jokers shown
    photos = real_photos or PROJECT_ROOT.parent / "shared" / "real_photos" / "edje_train"
    if photos.is_dir():
        n = len(list(photos.glob("*.xml")))
        with progress(n, "real photos") as bar:
            out["real_photos"] = evaluate_real_photos(reader, photos, load_image, progress=bar.update)
    if as_json:
        typer.echo(json.dumps(out))
        return
    if jokers is not None:
        typer.echo("each held-out design's jokers shown first (learn-jokers); not on the real photos")
    if "scenes" in out:
        sc = out["scenes"]
        typer.echo(
            f"held-out scenes ({scenes}): precision {sc['precision']:.3f}  recall {sc['recall']:.3f}  F1 {sc['f1']:.3f}"
        )
        for camera, k in sc["by_camera"].items():
            typer.echo(
                f"  {camera} camera ({k['frames']} frames): F1 {k['f1']:.3f}  ({k['fp']} false, {k['fn']} missed)"
            )
    if "spreads" in out:
        sp = out["spreads"]
        typer.echo(
            f"hand spreads ({spreads}): points exact {sp['points_exact']:.1%}  cards exact {sp['cards_exact']:.1%}"
        )
        for camera, k in sp["by_camera"].items():
            typer.echo(f"  {camera} camera ({k['spreads']} spreads): points exact {k['points_exact']:.1%}")
    if "real_photos" in out:
        rp = out["real_photos"]
        typer.echo(f"real photos ({rp['photos']} photos, {rp['boxes']} cards): rank accuracy {rp['rank_accuracy']:.3f}")


@app.command()
def doctor(
    config: Path = typer.Option(Path("/etc/mayi-table/config.yaml"), help="The device config to check."),
) -> None:
    """Check camera, pins, model and backend, config, disk space, time sync and the service."""
    from .doctor import all_ok, format_report, run_all

    checks = run_all(config)
    typer.echo(format_report(checks))
    if not all_ok(checks):
        raise typer.Exit(1)


@app.command()
def calibrate(
    config: Path = typer.Option(Path("/etc/mayi-table/config.yaml"), help="The device config whose zones to write."),
    frame: Path | None = typer.Option(None, help="Calibrate from this image instead of the configured camera."),
    picture: Path = typer.Option(Path("calibration.png"), help="Where to save the frame with the zones drawn."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the zones; leave the config unchanged."),
    markers: Path | None = typer.Option(None, help="Only write the printable A4 marker sheet (PNG) here."),
) -> None:
    """Find the table's zones from ArUco markers in a camera frame and write them into the config."""
    from .calibrate import calibrate_main, marker_sheet_main

    if markers is not None:
        code = marker_sheet_main(markers, config if config.is_file() else None, echo=typer.echo)
    else:
        code = calibrate_main(config, frame, picture, dry_run, echo=typer.echo)
    if code:
        raise typer.Exit(code)


@app.command("learn-jokers")
def learn_jokers(
    config: Path = typer.Option(Path("/etc/mayi-table/config.yaml"), help="The device config (model, camera)."),
    frame: List[Path] = typer.Option(
        [], help="Learn from this photo of the jokers instead of the camera (repeat for more photos)."
    ),
    picture: Path = typer.Option(Path("jokers.png"), help="Where to save the frame with the learnt marks boxed."),
    out: Path | None = typer.Option(None, help="Where to write the marks (default: the config's reading.jokers)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show the marks; write no file."),
) -> None:
    """Show the device the deck's own jokers: lay them face up, alone, on the table, and run this once."""
    from .learn_jokers import learn_jokers_main

    code = learn_jokers_main(config, frame, picture, out, dry_run, echo=typer.echo)
    if code:
        raise typer.Exit(code)


@app.command()
def run(
    config: Path = typer.Option(Path("/etc/mayi-table/config.yaml"), help="The device config (YAML)."),
    check_config: bool = typer.Option(False, "--check-config", help="Only validate the config; exit 2 if it is bad."),
    log_level: str = typer.Option("info", help="Log level of the JSON-lines log on standard error."),
) -> None:
    """The device's main loop: camera -> recogniser -> referee -> journal -> scoreboard (what the service runs)."""
    from .launch import run_main

    code = run_main(config, check_config, echo=typer.echo, log_level=log_level)
    if code:
        raise typer.Exit(code)


@app.command()
def demo(
    profile: str = typer.Option("petras", help="Rule profile: petras or classic."),
    seed: int = typer.Option(1, help="The demo game's seed (the same seed plays the same game)."),
    players: int = typer.Option(4, help="Bots at the table (2-4)."),
    port: int = typer.Option(8000, help="Port of the scoreboard."),
    host: str = typer.Option("127.0.0.1", help="Address to serve on (0.0.0.0: the whole network)."),
    speed: float = typer.Option(1.0, help="Film speed: 2 plays the table twice as fast (if recognition keeps up)."),
    backend: str = typer.Option("onnx", help="Recogniser backend: onnx, ncnn or ultralytics."),
    model_dir: Path = typer.Option(Path("vision_models"), help="Folder with the trained models."),
    journal: Path | None = typer.Option(None, help="Journal file (default: a new temporary folder)."),
    pin: str = typer.Option("1234", help="Host PIN for /host."),
    exit_at_end: bool = typer.Option(False, "--exit-at-end", help="Stop when the game is over."),
    oracle: bool = typer.Option(False, "--oracle", help="Read cards from the renderer's labels, not the model."),
    held_out: bool = typer.Option(False, "--held-out", help="Draw the cards in a deck design never trained on."),
    rounds: int | None = typer.Option(None, help="Film only the first N rounds (default: the whole game)."),
    log_level: str = typer.Option("warning", help="Log level of the JSON-lines log on standard error."),
) -> None:
    """A complete bot game, rendered frame by frame through the real recogniser and referee, on a live scoreboard."""
    from .launch import demo_main

    if players < 2 or players > 4:
        _fail("the demo table has four seats: --players 2, 3 or 4")
    if profile not in PROFILES:
        _fail(f"unknown profile {profile!r} (choose one of {', '.join(PROFILES)})")
    code = demo_main(
        profile=profile,
        seed=seed,
        players=players,
        host=host,
        port=port,
        speed=speed,
        backend=backend,
        model_dir=model_dir,
        journal=journal,
        pin=pin,
        exit_at_end=exit_at_end,
        oracle=oracle,
        held_out=held_out,
        rounds=rounds,
        echo=typer.echo,
        log_level=log_level,
    )
    if code:
        raise typer.Exit(code)


@app.command()
def export(
    out: Path = typer.Argument(..., help="The .mayi.jsonl record to write."),
    config: Path = typer.Option(Path("/etc/mayi-table/config.yaml"), help="The device config (names the journal)."),
    journal: Path | None = typer.Option(None, help="The journal file itself (instead of the config's)."),
) -> None:
    """Write the game in the journal as a `.mayi.jsonl` game record (GAME_RECORD.md)."""
    from .table.journal import Journal, JournalError

    if journal is None:
        from .config import ConfigError, load_config

        try:
            journal = load_config(config).journal.path
        except ConfigError as e:
            _fail(str(e))
    assert journal is not None
    if not journal.is_file():
        _fail(f"no journal at {journal}")
    try:
        with Journal(journal) as j:
            written = j.export(out)
    except (JournalError, OSError) as e:
        _fail(str(e))
    typer.echo(f"wrote {written}")


from .vision.recognize_cli import recognize  # noqa: E402  (its heavy imports happen inside)

app.command()(recognize)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
