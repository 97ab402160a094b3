"""Refereeing a live game: what the tracker reads each frame, handed to the referee.

In: the options a game night is started with (players, penalty reading, solo, the computer
opponent, the variant, who took which set when nobody pressed a key) and the ``LiveLayout``
of each analysed frame. Out: the referee's events, the lines of the scoreboard drawn on the
picture, and the game summary at the end. The rules themselves live in
``setvision.solver.referee``; this module only translates between the two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from setvision.solver import Card
from setvision.solver.errors import SetvisionError
from setvision.solver.referee import (
    TABLE,
    Event,
    Opponent,
    Referee,
    RefereeSettings,
    TableView,
    summarise,
)
from setvision.solver.referee.summary import GameSummary
from setvision.solver.variants import get_variant
from setvision.vision.live.scoreboard import draw_scoreboard, scoreboard_box
from setvision.vision.live.tracking import LiveLayout

#: A card with a corner this close to the picture's border (share of its size) lies at the edge.
EDGE_MARGIN = 0.01
#: Player keys are 1 to 9.
MAX_PLAYERS = 9


def parse_players(text: str) -> tuple[str, ...]:
    """``"Ann,Bob,Eve"`` or a number (``"3"``: Player 1 to Player 3)."""
    text = text.strip()
    if text.isdigit():
        count = int(text)
        if not 1 <= count <= MAX_PLAYERS:
            raise SetvisionError(f"--players takes 1 to {MAX_PLAYERS} players, got {count}")
        return tuple(f"Player {i}" for i in range(1, count + 1))
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    if not 1 <= len(names) <= MAX_PLAYERS:
        raise SetvisionError(f"--players takes 1 to {MAX_PLAYERS} names, got {len(names)}")
    return names


def parse_claims(text: str | None, players: Sequence[str]) -> tuple[str, ...]:
    """``--claims "Ann,Bob,table"``: who took each set that leaves the table, in order;
    a name, a player's key number, or ``table`` (judged, scored to nobody)."""
    if not text:
        return ()
    claims = []
    for word in (w.strip() for w in text.split(",") if w.strip()):
        if word.isdigit() and 1 <= int(word) <= len(players):
            word = players[int(word) - 1]
        if word not in players and word != TABLE:
            raise SetvisionError(f"--claims names {word!r}, who is not playing")
        claims.append(word)
    return tuple(claims)


@dataclass(frozen=True)
class GameOptions:
    """How a game night is set up, as the command line gives it."""

    players: str = "1"
    penalty: str | None = None
    solo: bool = False
    opponent: str | None = None
    seed: int = 0
    variant: str = "standard"
    claims: str | None = None


def make_game(options: GameOptions) -> LiveGame:
    """The referee for these options; a multi-player game must name its penalty reading."""
    players = parse_players(options.players)
    if options.solo and len(players) != 1:
        raise SetvisionError(f"--solo is for one player, got {len(players)} (use --players 1)")
    competing = len(players) > 1 or options.opponent is not None
    if competing and not options.solo and options.penalty is None:
        raise SetvisionError(
            "the rule texts disagree on a wrong claim: choose --penalty lose-set (hand back "
            "one set won) or --penalty sit-out (no claim until another player finds a set)"
        )
    settings = RefereeSettings(
        players,
        options.penalty or "lose-set",
        get_variant(options.variant),
        options.solo,
        parse_claims(options.claims, players),
    )
    opponent = Opponent(options.opponent, options.seed) if options.opponent else None
    return LiveGame(Referee(settings, opponent))


def table_view(result: LiveLayout) -> TableView:
    """The table as the referee sees it: identities, whether all is settled, the sure no-set."""
    layout = result.layout
    width, height = layout.image_size
    edge = []
    for reading in layout.cards:
        corners = np.asarray(reading.corners_xy, float)
        margin = EDGE_MARGIN * max(width, height)
        x, y = corners[:, 0], corners[:, 1]
        if (
            (x < margin).any()
            or (y < margin).any()
            or (x > width - margin).any()
            or (y > height - margin).any()
        ):
            edge.append(reading.card)
    return TableView(
        result.t,
        tuple(reading.card for reading in layout.cards),
        settled=not result.unsettled,
        no_set_sure=result.verdict == "no_set",
        edge=frozenset(edge),
    )


@dataclass
class LiveGame:
    """One game followed live: frames in, events out; claims from the window's keys.

    ``listener`` hears every event as it happens (to print them), whatever caused it.
    """

    referee: Referee
    listener: Callable[[list[Event]], None] | None = None

    def _tell(self, events: list[Event]) -> list[Event]:
        if events and self.listener is not None:
            self.listener(events)
        return events

    @property
    def players(self) -> tuple[str, ...]:
        return self.referee.settings.players

    @property
    def rules(self) -> str:
        return self.referee.settings.describe()

    def update(self, result: LiveLayout) -> list[Event]:
        return self._tell(self.referee.observe(table_view(result)))

    def player(self, number: int) -> str | None:
        """The player of a key 1-9, None when there is none."""
        return self.players[number - 1] if 1 <= number <= len(self.players) else None

    def arm(self, t: float, number: int) -> None:
        player = self.player(number)
        if player is not None:
            self.referee.arm(t, player)

    def claim(self, t: float, number: int, cards: Iterable[Card]) -> list[Event]:
        player = self.player(number)
        if player is None:
            return []
        return self._tell(self.referee.claim(t, player, cards, "keys"))

    def finish(self, t: float) -> list[Event]:
        return self._tell(self.referee.finish(t))

    def overlay(self, image: np.ndarray) -> np.ndarray:
        """The picture with the scoreboard drawn on it."""
        return draw_scoreboard(image, self.scoreboard())

    def overlay_box(self, shape: tuple[int, ...]) -> tuple[int, int, int, int]:
        """Where ``overlay`` draws on a picture of this shape: (x, y, width, height)."""
        return scoreboard_box(shape, self.scoreboard())

    def summary(self) -> GameSummary:
        return summarise(self.referee)

    def scoreboard(self) -> list[str]:
        """The lines drawn on the picture: scores (who sits out), the stock, the prompt."""
        referee = self.referee
        out = set(referee.sitting_out())
        scores = "   ".join(
            f"{i}:{name} {score}" + (" (out)" if name in out else "")
            for i, (name, score) in enumerate(referee.scores, 1)
        )
        stock = "?" if referee.stock is None else str(referee.stock)
        lines = [scores, f"stock {stock}   table {len(referee.table)}"]
        if referee.started is not None and referee.settings.solo:
            end = referee.ended if referee.ended is not None else referee.now
            lines[1] += f"   clock {end - referee.started:5.1f} s"
        if referee.prompt:
            lines.append(referee.prompt)
        return lines
