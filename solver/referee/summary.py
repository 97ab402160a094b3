"""The game summary: per player sets, wrong claims and penalties; the sets taken, with times.

``summarise`` reads a ``Referee`` once the round is over (or stopped); ``summary_record`` is
its JSON form and ``summary_table`` a short table for the terminal.
"""

from __future__ import annotations

from dataclasses import dataclass

from setvision.solver.referee.referee import Referee, TakenSet


@dataclass(frozen=True)
class PlayerLine:
    """One player's tallies: sets held, valid claims, wrong claims, penalties, score."""

    name: str
    sets: int
    found: int
    wrong: int
    penalties: int
    score: int


@dataclass(frozen=True)
class GameSummary:
    """How the round went: the rules, the players, the sets taken, its length and the stock."""

    rules: str
    variant: str
    players: tuple[PlayerLine, ...]
    taken: tuple[TakenSet, ...]
    seconds: float | None
    stock: int | None
    flags: int
    ended: str | None


def summarise(referee: Referee) -> GameSummary:
    board = referee.board
    players = tuple(
        PlayerLine(
            name,
            board.sets.get(name, 0),
            record.found,
            record.wrong,
            record.penalties,
            board.score(name),
        )
        for name, record in referee.records.items()
    )
    seconds = None
    if referee.started is not None:
        seconds = (referee.ended if referee.ended is not None else referee.now) - referee.started
    ending = next((e.reason for e in reversed(referee.events) if e.kind == "end"), None)
    flags = sum(e.kind == "flag" for e in referee.events)
    return GameSummary(
        referee.settings.describe(),
        referee.settings.variant.name,
        players,
        tuple(referee.taken),
        seconds,
        referee.stock,
        flags,
        ending,
    )


def summary_record(summary: GameSummary) -> dict:
    """The JSON form: ``{"event": "summary", ...}`` so it can close a JSON-lines stream."""
    return {
        "event": "summary",
        "rules": summary.rules,
        "variant": summary.variant,
        "players": [vars(line) for line in summary.players],
        "taken": [
            {
                "t": round(s.t, 3),
                "player": s.player,
                "cards": [str(c) for c in s.cards],
                "handed_back": s.handed_back,
            }
            for s in summary.taken
        ],
        "seconds": None if summary.seconds is None else round(summary.seconds, 3),
        "stock": summary.stock,
        "flags": summary.flags,
        "ended": summary.ended,
    }


def summary_table(summary: GameSummary) -> str:
    """A few lines: one row per player, then the length of the round and the stock."""
    width = max([6] + [len(line.name) for line in summary.players])
    rows = [f"{'player':<{width}}  sets  found  wrong  penalties  score"]
    for line in summary.players:
        rows.append(
            f"{line.name:<{width}}  {line.sets:>4}  {line.found:>5}  {line.wrong:>5}  "
            f"{line.penalties:>9}  {line.score:>5}"
        )
    length = "?" if summary.seconds is None else f"{summary.seconds:.1f} s"
    stock = "unknown" if summary.stock is None else str(summary.stock)
    rows.append(
        f"{len(summary.taken)} sets taken in {length}; stock {stock}; {summary.flags} flagged; "
        f"{summary.ended or 'going on'}"
    )
    return "\n".join(rows)
