"""The device's configuration: one YAML file, validated by pydantic models, never guessed.

:func:`load_config` reads the file and returns a :class:`DeviceConfig`; anything wrong raises a
:class:`ConfigError` whose message names the file, the line and the key, one problem a line::

    /etc/mayi-table/config.yaml:31: zones.seats[2]: a polygon needs at least 3 points, not 2

Every model forbids unknown keys, so a typo is an error rather than a silently ignored setting.
Lines come from the YAML node tree (each key and list item keeps its start mark), so a problem in
``seats[3].led`` points at the line where that seat is written.

:func:`write_zones` rewrites only the ``zones:`` block of a config file (what ``mayi-table
calibrate`` proposes), keeping every other line, comments included, as it was.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from pathlib import Path
from typing import Annotated, Any, Iterable, Literal, Mapping, Sequence, Union

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from .rules.profiles import PROFILES, ProfileError, make_profile
from .table.claims import DEFAULT_BOUNCE_S, DEFAULT_LENGTH_S, DEFAULT_LIT_S
from .vision.classes import MIN_CONFIDENCE

BCM_PINS = range(2, 28)  # the 40-pin header's GPIO 2..27
CAMERA_SOURCES = ("picamera2", "opencv", "folder", "rendered")
MIN_AREA = 1e-4  # a zone smaller than 1/10000 of the frame is a typo, not a place on the table

Key = tuple[Union[str, int], ...]


class ConfigError(ValueError):
    """The config cannot be used. `problems` holds (file, line, key, message) for each problem; the
    message is one ``file:line: key: message`` line per problem."""

    def __init__(self, problems: Sequence[tuple[str, int | None, str, str]]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(_format_problem(*p) for p in self.problems))


def _format_problem(file: str, line: int | None, key: str, message: str) -> str:
    where = f"{file}:{line}" if line is not None else file
    return f"{where}: {key}: {message}" if key else f"{where}: {message}"


class _Located(ValueError):
    """Raised inside a validator to point at a key below the model being validated (pydantic puts
    a model validator's error on the model itself); :func:`load_config` moves it there."""

    def __init__(self, loc: Key, message: str) -> None:
        super().__init__(message)
        self.loc = loc
        self.message = message


# ------------------------------------------------------------------ geometry


Point = tuple[float, float]


def polygon_area(points: Sequence[Point]) -> float:
    """The shoelace area (absolute) of a polygon."""
    total = 0.0
    for (x1, y1), (x2, y2) in zip(points, list(points[1:]) + list(points[:1])):
        total += x1 * y2 - x2 * y1
    return abs(total) / 2.0


def _check_polygon(points: list[Point]) -> list[Point]:
    if len(points) < 3:
        raise ValueError(f"a polygon needs at least 3 points, not {len(points)}")
    for i, (x, y) in enumerate(points):
        if not (math.isfinite(x) and math.isfinite(y) and 0.0 <= x <= 1.0 and 0.0 <= y <= 1.0):
            raise ValueError(
                f"point {i} [{x}, {y}] is outside 0.0-1.0 (zones use relative image coordinates: "
                "x from the left edge, y from the top edge)"
            )
    if polygon_area(points) < MIN_AREA:
        raise ValueError("the polygon has (almost) no area: its points are repeated or lie on one line")
    return points


Polygon = Annotated[list[Point], AfterValidator(_check_polygon)]


def point_in_polygon(point: Point, polygon: Sequence[Point]) -> bool:
    """Even-odd rule; points on an edge may fall either way."""
    x, y = point
    inside = False
    n = len(polygon)
    for i in range(n):
        x1, y1 = polygon[i]
        x2, y2 = polygon[(i + 1) % n]
        if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
            inside = not inside
    return inside


# ------------------------------------------------------------------ models


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _pin(value: object) -> object:
    # bool is an int to Python; "yes" as a pin is a typo, not GPIO 1
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"a pin is a BCM GPIO number 2-27, not {value!r}")
    if value not in BCM_PINS:
        raise ValueError(f"GPIO{value} is not a BCM GPIO number 2-27 (use BCM numbers like 17, not board pin numbers)")
    return value


Pin = Annotated[int, BeforeValidator(_pin)]


class SeatConfig(_Model):
    """A seat: its name, the BCM pin of its button (to ground, pulled up) and of its LED."""

    name: str = Field(min_length=1, max_length=40)
    button: Pin
    led: Pin

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a seat needs a name")
        return value.strip()


class Zones(_Model):
    """Where things lie, as polygons in relative image coordinates: one seat zone per seat (in the
    seats' order), the stock and the discard pile. `facing` (optional, one per seat): the angle in
    degrees, counter-clockwise, at which a seat's cards lie upright for its player (0 bottom edge,
    90 right, 180 top, 270 left); without it the reader takes the frame edge nearest the zone."""

    seats: list[Polygon] = Field(min_length=1)
    stock: Polygon
    discard: Polygon
    facing: list[Annotated[float, Field(ge=0, lt=360)]] | None = None

    @model_validator(mode="after")
    def _one_facing_per_seat(self) -> Zones:
        if self.facing is not None and len(self.facing) != len(self.seats):
            raise _Located(
                ("facing",), f"{len(self.facing)} angles for {len(self.seats)} seat zones: give one per seat"
            )
        return self


class Picamera2Camera(_Model):
    """A Raspberry Pi camera module through libcamera (frames come as BGR, see hardware.camera)."""

    source: Literal["picamera2"]
    width: int = Field(default=1920, ge=64, le=8192)
    height: int = Field(default=1080, ge=64, le=8192)


class OpenCVCamera(_Model):
    """cv2.VideoCapture: a device index (0), a device path (/dev/video0), a video file or a URL."""

    source: Literal["opencv"]
    device: Union[int, str] = 0
    width: int | None = Field(default=None, ge=64, le=8192)
    height: int | None = Field(default=None, ge=64, le=8192)


class FolderCamera(_Model):
    """The images of a folder, in name order, at `fps` frames a second; `loop` starts over at the end."""

    source: Literal["folder"]
    path: Path
    fps: float = Field(default=2.0, gt=0, le=120)
    loop: bool = True


class RenderedCamera(_Model):
    """A game played by bots and drawn by the synthetic table renderer (the demo)."""

    source: Literal["rendered"]
    seed: int = 0
    profile: Literal["petras", "classic"] = "petras"
    players: int = Field(default=4, ge=2, le=10)
    speed: float = Field(default=1.0, gt=0, le=100)
    width: int = Field(default=1920, ge=64, le=8192)
    height: int = Field(default=1080, ge=64, le=8192)


CameraConfig = Annotated[
    Union[Picamera2Camera, OpenCVCamera, FolderCamera, RenderedCamera], Field(discriminator="source")
]


class DetectorConfig(_Model):
    """The card recogniser: backend, the folder holding its exported model, optional confidence
    threshold (the model's own default when unset) and inference threads."""

    backend: Literal["ncnn", "onnx", "ultralytics"] = "ncnn"
    model_dir: Path = Path("/opt/mayi-table/app/vision_models")
    conf: float | None = Field(default=None, gt=0, lt=1)
    threads: int = Field(default=3, ge=1, le=64)  # a Pi has 4 cores: one is left for camera, web and referee


DEFAULT_FAINT_FROM = 0.25  # as measured in benchmarks/referee.py --faint


class ReadingConfig(_Model):
    """How camera readings become table snapshots (vision.table_reading.TableReader):
    `stable_frames` identical readings in a row before a change counts, `inertia` readings before a
    card is believed to have moved to another zone, detections below `min_confidence` ignored, and
    at most `fps` frames a second through the detector. `faint_from`: the card classifier's readings
    from this level up to its own threshold (`vision.classes.MIN_CONFIDENCE`) are passed on as
    faint readings, which the referee takes only where the rules settle them (a card of an open that
    the contract needs, a hand short by it, a meld's own card); null passes none on.
    `four_index_deck`: true when the deck prints its index in all four corners (continental decks),
    false when in two; null: as the table shows it (a card showing three or four indices).
    `deshake`: a frame blurred by a shaken camera has its indices read in a sharpened copy too
    (vision.shake). `jokers`: the file `mayi-table learn-jokers` writes when shown the deck's own
    jokers (vision.jokers); read when it exists, else the card classifier alone names jokers."""

    stable_frames: int = Field(default=3, ge=1, le=100)
    inertia: int = Field(default=3, ge=1, le=100)
    min_confidence: float = Field(default=0.0, ge=0, le=1)
    fps: float = Field(default=4.0, gt=0, le=60)
    faint_from: float | None = Field(default=DEFAULT_FAINT_FROM, gt=0, lt=MIN_CONFIDENCE)
    four_index_deck: bool | None = None
    deshake: bool = True
    jokers: Path = Path("/var/lib/mayi-table/jokers.npz")


class ClaimsConfig(_Model):
    """The "May I?" buttons: claim window length, contact bounce, how long the winner's LED stays
    lit, and how long a button is held to mean "I went out, the round is over"."""

    window_s: float = Field(default=DEFAULT_LENGTH_S, gt=0, le=60)
    bounce_s: float = Field(default=DEFAULT_BOUNCE_S, ge=0, le=1)
    lit_s: float = Field(default=DEFAULT_LIT_S, ge=0, le=60)
    long_press_s: float = Field(default=2.0, gt=0, le=30)


class WebConfig(_Model):
    host: str = Field(default="0.0.0.0", min_length=1)
    port: int = Field(default=8000, ge=1, le=65535)


def _journal(value: object) -> object:
    return {"path": value} if isinstance(value, str) else value  # `journal: PATH` is short for `journal: {path: PATH}`


class JournalConfig(_Model):
    path: Path = Path("/var/lib/mayi-table/journal.sqlite3")


def _host_pin(value: object) -> object:
    if isinstance(value, int) and not isinstance(value, bool):
        # unquoted, YAML reads 0042 as a number (octal 34, even): the digits the host types are lost
        raise ValueError('write the PIN in quotes, e.g. host_pin: "0042" (unquoted, YAML reads it as a number)')
    if isinstance(value, str) and not re.fullmatch(r"[0-9]{4,12}", value):
        raise ValueError(f"the host PIN is 4 to 12 digits, not {value!r}")
    return value


class DeviceConfig(_Model):
    """The whole device config (firmware_config/mayi-table.yaml shows every key)."""

    profile: Literal["petras", "classic"]
    variants: list[str] = Field(default_factory=list)
    seats: list[SeatConfig] = Field(min_length=1, max_length=10)
    zones: Zones
    # the sections' models are frozen, so one default instance can be shared
    camera: CameraConfig = Picamera2Camera(source="picamera2")
    detector: DetectorConfig = DetectorConfig()
    reading: ReadingConfig = ReadingConfig()
    claims: ClaimsConfig = ClaimsConfig()
    web: WebConfig = WebConfig()
    host_pin: Annotated[str, BeforeValidator(_host_pin)]
    journal: Annotated[JournalConfig, BeforeValidator(_journal)] = JournalConfig()

    @model_validator(mode="after")
    def _consistent(self) -> DeviceConfig:
        if self.profile in PROFILES:
            try:
                make_profile(self.profile, tuple(self.variants))
            except ProfileError as exc:
                raise _Located(("variants",), str(exc)) from None
        names: dict[str, int] = {}
        users: dict[int, str] = {}
        for i, seat in enumerate(self.seats):
            if seat.name in names:
                raise _Located(("seats", i, "name"), f"{seat.name!r} is already the name of seats[{names[seat.name]}]")
            names[seat.name] = i
            for role in ("button", "led"):
                pin = getattr(seat, role)
                if pin in users:
                    raise _Located(("seats", i, role), f"GPIO{pin} is already {users[pin]}; every pin is used once")
                users[pin] = f"seats[{i}].{role} ({seat.name})"
        if len(self.zones.seats) != len(self.seats):
            raise _Located(
                ("zones", "seats"),
                f"{len(self.zones.seats)} seat zones for {len(self.seats)} seats: give one polygon per seat, "
                "in the seats' order (mayi-table calibrate writes them)",
            )
        return self

    @property
    def seat_names(self) -> list[str]:
        return [s.name for s in self.seats]


# ------------------------------------------------------------------ YAML with line numbers


def _node_lines(node: yaml.Node, key: Key, lines: dict[Key, int], dupes: list[tuple[Key, int]]) -> None:
    """Record the 1-based line of every key path under `node` (a key's own line for mappings, the
    item's line for sequences) and any key written twice."""
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for k, v in node.value:
            name = k.value if isinstance(k, yaml.ScalarNode) else str(k.value)
            sub = key + (name,)
            if name in seen:
                dupes.append((sub, k.start_mark.line + 1))
            seen.add(name)
            lines[sub] = k.start_mark.line + 1
            _node_lines(v, sub, lines, dupes)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            sub = key + (i,)
            lines[sub] = item.start_mark.line + 1
            _node_lines(item, sub, lines, dupes)


def key_path(loc: Iterable[Union[str, int]]) -> str:
    """("zones", "seats", 2) -> "zones.seats[2]"."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _line_of(loc: Key, lines: Mapping[Key, int]) -> int | None:
    """The line of the longest prefix of `loc` written in the file (a missing key: its parent's)."""
    for n in range(len(loc), 0, -1):
        if loc[:n] in lines:
            return lines[loc[:n]]
    return None


def _data_loc(loc: Key, data: Any) -> Key:
    """Pydantic's error location with the tags of tagged unions (camera.`opencv`.device) removed:
    keep only the steps that exist in the data, and the last step (a missing key)."""
    out: list[Union[str, int]] = []
    node = data
    for i, part in enumerate(loc):
        last = i == len(loc) - 1
        if isinstance(node, Mapping) and part in node:
            out.append(part)
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            out.append(part)
            node = node[part]
        elif isinstance(node, Mapping) and isinstance(part, str) and not last and part in CAMERA_SOURCES:
            continue  # the union's tag
        else:
            out.append(part)
            node = None
    return tuple(out)


def _allowed_keys(model: type[BaseModel]) -> str:
    return ", ".join(model.model_fields)


_SECTION_MODELS: dict[str, type[BaseModel]] = {
    "": DeviceConfig,
    "zones": Zones,
    "detector": DetectorConfig,
    "reading": ReadingConfig,
    "claims": ClaimsConfig,
    "web": WebConfig,
    "journal": JournalConfig,
}
_CAMERA_MODELS: dict[str, type[BaseModel]] = {
    "picamera2": Picamera2Camera,
    "opencv": OpenCVCamera,
    "folder": FolderCamera,
    "rendered": RenderedCamera,
}


def _model_at(parent: Key, data: Any) -> type[BaseModel] | None:
    """The model that validates the mapping at `parent`, to list the keys it allows."""
    if parent and parent[0] == "seats" and len(parent) == 2:
        return SeatConfig
    if parent == ("camera",):
        camera = data.get("camera") if isinstance(data, Mapping) else None
        source = camera.get("source") if isinstance(camera, Mapping) else None
        return _CAMERA_MODELS.get(str(source))
    if len(parent) <= 1:
        return _SECTION_MODELS.get(str(parent[0]) if parent else "")
    return None


def _message(err: Mapping[str, Any], loc: Key, data: Any) -> tuple[Key, str]:
    kind = err["type"]
    value = err.get("input")
    if kind == "value_error":
        cause = err.get("ctx", {}).get("error")
        if isinstance(cause, _Located):
            return loc + cause.loc, cause.message
        return loc, str(cause) if cause is not None else err["msg"]
    if kind == "extra_forbidden":
        model = _model_at(loc[:-1], data)
        allowed = f" (the keys here: {_allowed_keys(model)})" if model is not None else ""
        return loc, f"unknown key{allowed}"
    if kind == "missing":
        return loc, "missing (required)"
    if kind == "union_tag_invalid":
        tag = value.get("source") if isinstance(value, Mapping) else value
        return loc + ("source",), f"unknown camera source {tag!r}: one of {', '.join(CAMERA_SOURCES)}"
    if kind == "union_tag_not_found":
        return loc + ("source",), f"missing: the camera's source, one of {', '.join(CAMERA_SOURCES)}"
    if kind in ("model_type", "dict_type"):
        return loc, f"expected a mapping of settings, not {value!r}"
    return loc, f"{err['msg']}, not {value!r}" if not isinstance(value, (Mapping, list)) else err["msg"]


def _read_yaml(path: Path) -> tuple[Any, dict[Key, int]]:
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError([(name, None, "", "no such file")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([(name, None, "", f"cannot read it: {exc}")]) from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        what = f"{context}: {problem}" if context else str(problem)
        raise ConfigError([(name, line, "", f"not valid YAML: {what}")]) from None
    lines: dict[Key, int] = {}
    dupes: list[tuple[Key, int]] = []
    if root is not None:
        _node_lines(root, (), lines, dupes)
    if dupes:
        raise ConfigError([(name, line, key_path(k), "written twice; keep one") for k, line in dupes])
    return data, lines


def load_config(path: Path | str, *, skip_zones: bool = False) -> DeviceConfig:
    """Read and validate the config at `path`; ConfigError names file, line and key of each problem.

    `skip_zones`: ignore the ``zones:`` section and use :func:`default_zones` instead; calibration
    uses it, since it rewrites the zones and a broken zones section must not stop it.
    """
    p = Path(path)
    data, lines = _read_yaml(p)
    if not isinstance(data, dict):
        kind = "empty" if data is None else f"a {type(data).__name__}"
        raise ConfigError([(str(p), 1, "", f"the config is {kind}: it must be a mapping of settings (key: value)")])
    if skip_zones:
        seats = data.get("seats")
        data = dict(data, zones=default_zones(len(seats) if isinstance(seats, list) and seats else 1))
    try:
        return DeviceConfig.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc, message = _message(err, _data_loc(tuple(err["loc"]), data), data)
            problems.append((str(p), _line_of(loc, lines), key_path(loc), message))
        raise ConfigError(problems) from None


# ------------------------------------------------------------------ default layout


def default_zones(n_seats: int) -> Zones:
    """Placeholder zones for `n_seats` seats: the seats evenly round a full-frame table, clockwise
    from the bottom edge (as in the shipped config), stock and discard side by side in the middle.
    Calibration computes the same layout from the frame (calibrate.propose_zones)."""
    from .calibrate import layout_zones  # the geometry lives with calibration; it needs no camera

    return layout_zones(n_seats, frame=(1920, 1080)).zones


# ------------------------------------------------------------------ writing zones back


def _number(value: float) -> str:
    return repr(round(float(value), 3))


def _polygon_yaml(points: Sequence[Point]) -> str:
    return "[" + ", ".join(f"[{_number(x)}, {_number(y)}]" for x, y in points) + "]"


def zones_yaml(zones: Zones, seat_names: Sequence[str] | None = None) -> str:
    """The ``zones:`` block as YAML text (flow-style polygons, one per line, seat names as comments)."""
    out = ["zones:", "  seats:"]
    for i, poly in enumerate(zones.seats):
        name = seat_names[i] if seat_names is not None and i < len(seat_names) else f"seat {i + 1}"
        out.append(f"    - {_polygon_yaml(poly)}  # {name}")
    out.append(f"  stock: {_polygon_yaml(zones.stock)}")
    out.append(f"  discard: {_polygon_yaml(zones.discard)}")
    if zones.facing is not None:
        out.append(f"  facing: [{', '.join(f'{round(a, 1):g}' for a in zones.facing)}]  # degrees; 0 = the bottom edge")
    return "\n".join(out) + "\n"


def _last_line(node: yaml.Node) -> int:
    """The 0-based line of the last character that belongs to `node` (a block collection's own end
    mark lies at the next key, after any comments, so look at its last item instead)."""
    if isinstance(node, yaml.MappingNode) and node.value and node.flow_style is not True:
        return _last_line(node.value[-1][1])
    if isinstance(node, yaml.SequenceNode) and node.value and node.flow_style is not True:
        return _last_line(node.value[-1])
    end = node.end_mark
    # an end mark at column 0 means the node ended with the previous line's line break
    return int(end.line - 1 if end.column == 0 and end.line > node.start_mark.line else end.line)


def write_zones(path: Path | str, zones: Zones, seat_names: Sequence[str] | None = None) -> None:
    """Replace the ``zones:`` block of the config at `path` (or append one), keeping every other line,
    comments included. The file is replaced atomically and keeps its mode (and owner, where allowed)."""
    p = Path(path)
    name = str(p)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError([(name, None, "", f"cannot read it: {exc}")]) from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ConfigError([(name, mark.line + 1 if mark else None, "", f"not valid YAML: {exc}")]) from None
    block = zones_yaml(zones, seat_names)
    lines = text.splitlines(keepends=True)
    found = None
    if isinstance(root, yaml.MappingNode):
        if root.flow_style:
            raise ConfigError([(name, 1, "", "the config is one flow mapping ({...}); write it in block style")])
        for k, v in root.value:
            if isinstance(k, yaml.ScalarNode) and k.value == "zones":
                found = (k, v)
    elif root is not None:
        raise ConfigError([(name, 1, "", "the config must be a mapping of settings (key: value)")])
    if found is None:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        new_text = "".join(lines) + ("\n" if lines else "") + block
    else:
        k, v = found
        if k.start_mark.column != 0:
            raise ConfigError([(name, k.start_mark.line + 1, "zones", "expected at the start of the line")])
        first, last = k.start_mark.line, max(_last_line(v), k.start_mark.line)
        new_text = "".join(lines[:first]) + block + "".join(lines[last + 1 :])
    _replace_file(p, new_text)


def _replace_file(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, then rename it over `path`: a power cut leaves
    the old file or the new one, never half of each."""
    st = path.stat()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, st.st_mode & 0o7777)
        try:
            os.chown(tmp, st.st_uid, st.st_gid)
        except OSError:
            pass  # not root: the file becomes ours, with the same mode
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
