"""What the referee says, one dataclass per kind, and their JSON-lines form.

Every event carries ``t``, the game clock in seconds (the video's own clock, or the wall
clock of a camera). Cards are named by identity (``2-red-striped-oval``), never by their
number on the picture: numbers change as cards come and go, identities do not.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar

from setvision.solver.cards import Card


@dataclass(frozen=True)
class Deal:
    """Cards joined the table: the opening ``deal``, a ``refill`` or ``three more``."""

    kind: ClassVar[str] = "deal"
    t: float
    cards: tuple[Card, ...]
    reason: str
    table: int  # cards on the table after the deal
    stock: int | None  # cards left in the stock, None when it cannot be known


@dataclass(frozen=True)
class Returned:
    """Cards of a claim that was not scored came back to the table (not a deal)."""

    kind: ClassVar[str] = "returned"
    t: float
    cards: tuple[Card, ...]
    table: int


@dataclass(frozen=True)
class _PlayerEvent:
    """What every event about one player holds: when, and who."""

    t: float
    player: str


@dataclass(frozen=True)
class Claim(_PlayerEvent):
    """A player claims three cards: by ``keys`` (a player key and three clicks), by taking
    them off the table (``taken``), or the ``computer`` opponent."""

    kind: ClassVar[str] = "claim"
    cards: tuple[Card, Card, Card]
    how: str


@dataclass(frozen=True)
class Verdict(_PlayerEvent):
    """The referee's decision on a claim: ``valid``, ``wrong``, ``refused`` (the player may
    not claim, or the cards are not on the table) or ``unsure`` (a card is in doubt)."""

    kind: ClassVar[str] = "verdict"
    cards: tuple[Card, Card, Card]
    outcome: str
    reason: str


@dataclass(frozen=True)
class ScoreChange(_PlayerEvent):
    """A player's score moved by ``delta`` to ``score``."""

    kind: ClassVar[str] = "score"
    delta: int
    score: int
    reason: str


@dataclass(frozen=True)
class Penalty(_PlayerEvent):
    """A penalty given: ``lose-set``, ``sit-out`` or ``three more`` (solo)."""

    kind: ClassVar[str] = "penalty"
    rule: str
    text: str


@dataclass(frozen=True)
class Prompt:
    """What the dealer should do now."""

    kind: ClassVar[str] = "prompt"
    t: float
    text: str


@dataclass(frozen=True)
class Flag:
    """Something the referee will not count: a card seen twice, cards leaving or joining
    other than three at a time, three more cards dealt while a set lay on the table."""

    kind: ClassVar[str] = "flag"
    t: float
    text: str
    cards: tuple[Card, ...] = ()


@dataclass(frozen=True)
class RoundEnd:
    """The round is over (stock empty and no set), or the video or camera stopped first."""

    kind: ClassVar[str] = "end"
    t: float
    reason: str
    scores: tuple[tuple[str, int], ...]


Event = Deal | Returned | Claim | Verdict | ScoreChange | Penalty | Prompt | Flag | RoundEnd


def event_record(event: Event) -> dict:
    """One JSON-ready line: ``{"event": kind, "t": ..., fields...}``, cards as text."""
    record: dict = {"event": event.kind}
    for item in fields(event):
        value = getattr(event, item.name)
        if item.name == "t":
            value = round(value, 3)
        elif item.name == "cards":
            value = [str(card) for card in value]
        elif item.name == "scores":
            value = dict(value)
        record[item.name] = value
    return record


def event_text(event: Event) -> str:
    """One line a player reads, e.g. ``12.40 s  verdict  Ann: valid set``."""
    cards = ", ".join(str(c) for c in getattr(event, "cards", ()))
    if isinstance(event, Deal):
        stock = "?" if event.stock is None else event.stock
        body = (
            f"{event.reason}: {len(event.cards)} cards ({event.table} on the table, stock {stock})"
        )
    elif isinstance(event, Returned):
        body = f"{len(event.cards)} cards put back ({cards})"
    elif isinstance(event, Claim):
        body = f"{event.player} claims {cards} ({event.how})"
    elif isinstance(event, Verdict):
        body = f"{event.player}: {event.outcome}: {event.reason}"
    elif isinstance(event, ScoreChange):
        body = f"{event.player} {event.delta:+d} = {event.score} ({event.reason})"
    elif isinstance(event, Penalty):
        body = f"{event.player}: {event.rule}: {event.text}"
    elif isinstance(event, RoundEnd):
        scores = ", ".join(f"{name} {score}" for name, score in event.scores)
        body = f"{event.reason}; {scores}"
    else:
        body = event.text
    return f"{event.t:7.2f} s  {event.kind:<8} {body}"
