"""Request and response bodies of the web API (they are what `/openapi.json` documents)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ----- state ------------------------------------------------------------------------------
class MeldOut(BaseModel):
    owner: str
    kind: str
    cards: list[str]


class RoundOut(BaseModel):
    number: int | str
    contract: str
    dealer: str
    players: list[str]
    turn: str | None
    phase: Literal["draw", "play", "over"]
    over: bool
    went_out: str | None
    observed: bool
    hand_counts: dict[str, int]
    opened: list[str]
    melds: list[MeldOut]
    discard_top: str | None
    discard_count: int
    stock_count: int
    buys: dict[str, int]
    shown_hands: dict[str, list[str]] | None = Field(
        description="The hands spread at the end of the round; null while it is in play"
    )


class RoundScoreOut(BaseModel):
    round: int | str
    went_out: str | None
    scores: dict[str, int]


class GameOut(BaseModel):
    profile: str
    variants: list[str]
    seats: list[str]
    complete: bool
    winners: list[str]
    buys_allowed: bool
    buy_limit: int | None = Field(description="Buys per player per round; null is unlimited")
    rounds_total: int
    contracts: list[str]
    round: RoundOut | None
    next_round: int | str | None
    next_dealer: str | None
    next_contract: str | None
    scores: list[RoundScoreOut]
    totals: dict[str, int]
    leaders: list[str]
    tiebreak_players: list[str]


class FlagOut(BaseModel):
    seq: int
    reason: str
    event: dict[str, Any] | None = Field(description="The event held for the host (face-down cards removed)")
    at: str
    source: str | None
    has_image: bool
    status: Literal["open", "confirmed", "dismissed"]


class DeviceOut(BaseModel):
    camera_ok: bool | None
    camera_outage_since: str | None
    camera_last_error: str | None
    frames_processed: int
    recognizer_backend: str | None
    updated_at: str | None


class StateOut(BaseModel):
    """Everything face-up on the table, the score sheet, open flags and the device's health."""

    version: int
    game: GameOut | None
    flags: list[FlagOut]
    device: DeviceOut
    last_event: dict[str, Any] | None
    events: int
    journal_error: str | None


class HistoryItem(BaseModel):
    seq: int = Field(description="The journal entry the event is known by (the one corrections name)")
    event: dict[str, Any] = Field(description="The game-record line (GAME_RECORD.md)")


class ProfilesOut(BaseModel):
    profiles: list[str]
    variants: list[str]


class WriteOut(BaseModel):
    seq: int = Field(description="The journal entry written")
    version: int = Field(description="The state version that includes it")


class SessionOut(BaseModel):
    ok: bool
    expires_in: int = Field(description="Seconds the host session stays valid")


class ErrorOut(BaseModel):
    detail: str | list[dict[str, Any]] = Field(
        description="Why the request was refused: a sentence, or FastAPI's list of fields that do not validate"
    )


# ----- requests -----------------------------------------------------------------------------
class LoginIn(_In):
    pin: str = Field(min_length=1, max_length=64)


class GameIn(_In):
    profile: Literal["petras", "classic"]
    variants: list[str] = Field(default_factory=list, max_length=8)
    seats: list[str] = Field(min_length=1, max_length=8, description="Seat names in clockwise order")
    first_dealer: str | None = Field(default=None, max_length=24)
    abandon: bool = Field(default=False, description="Archive a game still in play and start over")


class DealIn(_In):
    upcard: str = Field(
        min_length=2, max_length=8, description="The card turned up to start the discard pile, e.g. 7H, 10S, JK"
    )
    dealer: str | None = Field(default=None, max_length=24, description="Default: the seat after the last dealer")


class RoundEndIn(_In):
    hands: dict[str, list[str]] = Field(description="Each seat's spread cards ([] for the seat that went out)")


class EventIn(_In):
    event: dict[str, Any] = Field(
        description='A game-record line, e.g. {"type": "discard", ...}',
        json_schema_extra={"required": ["type"], "properties": {"type": {"type": "string"}}},
    )


class ConfirmIn(_In):
    event: dict[str, Any] | None = Field(default=None, description="The host's edit; null accepts the flag as is")


class DismissIn(_In):
    reason: str = Field(default="", max_length=200)
