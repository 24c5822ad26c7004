"""`mayi-table replay`: the result object, the error shape with 1-based line numbers, and fuzzing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mayi_table.rules.record import dumps_event, replay_lines, score_sheet
from mayi_table.rules.simulate import play_game

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
RECORD = [dumps_event(e) for e in play_game("petras", 4, 5).events]
CLI = [sys.executable, "-m", "mayi_table.cli"]


def run_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    root = Path(__file__).resolve().parents[2]
    env = {"PYTHONPATH": str(root / "device"), "PATH": "/usr/bin:/bin"}
    return subprocess.run(CLI + list(args), input=stdin, capture_output=True, text=True, env=env, timeout=60)


def test_result_object_shape() -> None:
    """GAME_RECORD.md: ok, complete, rounds, totals, winners, state."""
    result, _ = replay_lines(RECORD)
    assert result["ok"] and result["complete"]
    assert set(result) == {"ok", "complete", "rounds", "totals", "winners", "state"}
    assert len(result["rounds"]) == 7 and all(set(r) == {"round", "went_out", "scores"} for r in result["rounds"])
    assert result["totals"] == {s: sum(r["scores"][s] for r in result["rounds"]) for s in result["totals"]}
    for key in ("round", "turn", "hands", "table", "discard_top", "stock_count", "buys"):
        assert key in result["state"]


def test_unfinished_game_has_no_winners() -> None:
    result, _ = replay_lines(RECORD[:40])
    assert result["ok"] and not result["complete"] and result["winners"] == []
    assert result["state"]["turn"] in result["totals"]


def test_error_names_the_first_illegal_line() -> None:
    lines = list(RECORD)
    bad = json.loads(lines[3])
    lines[3] = json.dumps({"type": "open", "seat": bad.get("seat", "Ann"), "melds": [["7H"]]})
    result, _ = replay_lines(lines)
    assert not result["ok"] and result["error"]["line"] == 4
    assert isinstance(result["error"]["message"], str) and result["error"]["message"]


def test_unreadable_lines_give_the_same_error_shape() -> None:
    """GAME_RECORD.md: not JSON, unknown card, unknown seat are errors of the same shape."""
    cases = {
        "not json": "{oops",
        "unknown card": json.dumps({"type": "discard", "seat": "Ann", "card": "ZZ"}),
        "unknown seat": json.dumps({"type": "discard", "seat": "Zed", "card": "7H"}),
        "unknown type": json.dumps({"type": "swap", "seat": "Ann"}),
        "not an object": "[1, 2]",
    }
    for what, line in cases.items():
        result, _ = replay_lines(RECORD[:2] + [line])
        assert result["ok"] is False and result["error"]["line"] == 3, what


def test_game_line_is_checked_at_once() -> None:
    """GAME_RECORD.md: unknown profile or variant, impossible combination, bad seat count: error on line 1."""
    for game in (
        {"type": "game", "profile": "rummy", "variants": [], "seats": ["A", "B", "C"]},
        {"type": "game", "profile": "classic", "variants": ["joker-swap"], "seats": ["A", "B", "C"]},
        {"type": "game", "profile": "classic", "variants": ["no-buy", "unlimited-buys"], "seats": ["A", "B", "C"]},
        {"type": "game", "profile": "petras", "variants": [], "seats": list("ABCDEFG")},
        {"type": "deal", "round": 1},
    ):
        result, _ = replay_lines([json.dumps(game)])
        assert result == {"ok": False, "error": result["error"]} and result["error"]["line"] == 1


def test_score_sheet_is_readable() -> None:
    result, _ = replay_lines(RECORD)
    sheet = score_sheet(result)
    assert "total" in sheet and "winner" in sheet and "Ann" in sheet


def test_cli_replay_json_and_exit_status(tmp_path: Path) -> None:
    good = tmp_path / "good.mayi.jsonl"
    good.write_text("\n".join(RECORD) + "\n", encoding="utf-8")
    out = run_cli("replay", str(good), "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["ok"] is True
    bad = tmp_path / "bad.mayi.jsonl"
    bad.write_text("\n".join(RECORD[:5] + ["{not json"]) + "\n", encoding="utf-8")
    out = run_cli("replay", str(bad), "--json")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert json.loads(out.stdout)["error"]["line"] == 6
    out = run_cli("replay", str(bad))
    assert out.returncode == 1 and "line 6" in out.stdout
    missing = run_cli("replay", str(tmp_path / "nope.jsonl"), "--json")
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(RECORD[0].encode() + b"\n\xff\xfe\n")
    out = run_cli("replay", str(binary), "--json")
    assert out.returncode == 1 and json.loads(out.stdout)["error"]["line"] == 2


def test_cli_golden_record() -> None:
    out = run_cli("replay", str(GOLDEN / "petras_07.mayi.jsonl"), "--json")
    assert out.returncode == 0
    assert json.loads(out.stdout) == json.loads((GOLDEN / "petras_07.expected.json").read_text(encoding="utf-8"))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
field_names = st.sampled_from(
    [
        "type",
        "seat",
        "card",
        "cards",
        "meld",
        "melds",
        "from",
        "hands",
        "round",
        "dealer",
        "upcard",
        "penalty",
        "profile",
        "variants",
        "seats",
        "at",
        "source",
    ]
)


@st.composite
def mutated_records(draw: st.DrawFn) -> list[str]:
    lines = list(RECORD[: draw(st.integers(1, len(RECORD)))])
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["field", "drop", "swap", "junk", "dup", "truncate"]))
        if how == "field":
            try:
                obj = json.loads(lines[i])
            except ValueError:
                continue  # already junk
            if isinstance(obj, dict):
                obj[draw(field_names)] = draw(json_values)
                lines[i] = json.dumps(obj)
        elif how == "drop" and len(lines) > 1:
            del lines[i]
        elif how == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif how == "junk":
            lines[i] = draw(st.text(max_size=30))
        elif how == "dup":
            lines.insert(i, lines[i])
        else:
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
    return lines


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(mutated_records())
def test_fuzzed_records_never_crash(lines: list[str]) -> None:
    """Bad input: every malformed or illegal line gives the error object, never a traceback."""
    result, _ = replay_lines(lines)
    assert result["ok"] in (True, False)
    if not result["ok"]:
        err = result["error"]
        assert set(err) == {"line", "message"} and 1 <= err["line"] <= max(1, len(lines))
        assert isinstance(err["message"], str) and err["message"]
    json.dumps(result)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(mutated_records())
def test_fuzzed_records_through_the_cli(lines: list[str]) -> None:
    out = run_cli("replay", "-", "--json", stdin="\n".join(lines) + "\n")
    assert out.returncode in (0, 1) and "Traceback" not in out.stderr
    result = json.loads(out.stdout)
    assert (out.returncode == 0) == result["ok"]


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(
    cut=st.integers(1, len(RECORD)),
    kind=st.sampled_from(["game", "deal", "draw", "buy", "open", "layoff", "discard", "round_end"]),
    fields=st.dictionaries(field_names, json_values, max_size=5),
)
def test_fuzzed_event_fields_never_crash(cut: int, kind: str, fields: dict[str, object]) -> None:
    line = json.dumps({"type": kind, **fields})
    result, _ = replay_lines(RECORD[:cut] + [line])
    if not result["ok"]:
        assert result["error"]["line"] == cut + 1
