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


@app.command()
def dataset(
    out: Path = typer.Option(Path("data/corners"), help="Folder to write images/, labels/ and data.yaml into."),
    scenes: int | None = typer.Option(None, help="Rendered training tables (default: the recipe's)."),
    val_scenes: int | None = typer.Option(None, help="Rendered validation tables (default: the recipe's)."),
    seed: int | None = typer.Option(None, help="Seed; the same seed renders the same data."),
    recipe: Path = typer.Option(Path("vision_models/recipe.yaml"), help="Training recipe YAML."),
) -> None:
    """Render training data for the card recogniser (resumes an interrupted build)."""
    from .vision.dataset import DatasetSpec, build_dataset
    from .vision.train import load_recipe

    try:
        conf = dict(load_recipe(recipe).get("dataset", {}))
    except (OSError, ValueError) as e:
        _fail(f"cannot read the recipe {recipe}: {e}")
    for key, value in (("scenes", scenes), ("val_scenes", val_scenes), ("seed", seed)):
        if value is not None:
            conf[key] = value
    try:
        spec = DatasetSpec(**conf)
    except TypeError as e:
        _fail(f"{recipe}: unknown dataset setting ({e})")
    with progress(spec.scenes + spec.val_scenes, "rendering") as bar:
        data = build_dataset(out, spec, progress=bar.update)
    typer.echo(f"wrote {data}")


@app.command()
def train(
    data: Path = typer.Option(Path("data/corners/data.yaml"), help="data.yaml written by `mayi-table dataset`."),
    run: Path = typer.Option(Path("runs/corners"), help="Run folder (checkpoints in run/weights/)."),
    epochs: int | None = typer.Option(None, help="Epochs (default: the recipe's)."),
    resume: bool = typer.Option(False, "--resume", help="Carry on from run/weights/last.pt."),
    export_to: Path | None = typer.Option(
        Path("vision_models"), help="Copy the best weights here and export ONNX and NCNN (empty: skip)."
    ),
    recipe: Path = typer.Option(Path("vision_models/recipe.yaml"), help="Training recipe YAML."),
) -> None:
    """Train the corner-index detector from its YAML, offline, on the CPU; resumable."""
    from .vision import train as training

    if not data.is_file():
        _fail(f"{data} does not exist; build it first with `mayi-table dataset`")
    best = training.train(data, run, epochs=epochs, resume=resume, recipe=recipe)
    typer.echo(f"best weights: {best}")
    if export_to is not None and str(export_to):
        paths = training.export(best, export_to)
        for kind, path in paths.items():
            typer.echo(f"{kind}: {path}")


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
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Score the recogniser on held-out deck designs, hand spreads and real photos."""
    from .vision.detect import ModelError
    from .vision.evaluate import evaluate_real_photos, evaluate_scenes, evaluate_spreads
    from .vision.offline import PROJECT_ROOT
    from .vision.recognize import Recognizer, load_image

    if real_photos is not None and not real_photos.is_dir():
        _fail(f"{real_photos} is not a folder", 1)
    try:
        reader = Recognizer(model, backend)
    except ModelError as e:
        _fail(str(e), 1)
    out: dict[str, Any] = {"model": str(model), "backend": backend}
    if scenes:
        with progress(scenes, "held-out scenes") as bar:
            score = evaluate_scenes(reader, scenes, seed=seed, progress=bar.update)
        out["scenes"] = {"count": scenes, **score.total.as_dict()}
        out["per_card_f1"] = {c: round(k.f1, 4) for c, k in sorted(score.per_card.items())}
    if spreads:
        with progress(spreads, "hand spreads") as bar:
            out["spreads"] = evaluate_spreads(reader, spreads, seed=seed + 1, progress=bar.update)
    photos = real_photos or PROJECT_ROOT.parent / "shared" / "real_photos" / "edje_train"
    if photos.is_dir():
        n = len(list(photos.glob("*.xml")))
        with progress(n, "real photos") as bar:
            out["real_photos"] = evaluate_real_photos(reader, photos, load_image, progress=bar.update)
    if as_json:
        typer.echo(json.dumps(out))
        return
    if "scenes" in out:
        sc = out["scenes"]
        typer.echo(
            f"held-out scenes ({scenes}): precision {sc['precision']:.3f}  recall {sc['recall']:.3f}  F1 {sc['f1']:.3f}"
        )
    if "spreads" in out:
        sp = out["spreads"]
        typer.echo(
            f"hand spreads ({spreads}): points exact {sp['points_exact']:.1%}  cards exact {sp['cards_exact']:.1%}"
        )
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


from .vision.recognize_cli import recognize  # noqa: E402  (its heavy imports happen inside)

app.command()(recognize)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
