"""The computer opponent: it sees every set at once but takes its time to say so.

Its delay grows with its level and with how hard the set is to see: a set whose cards differ
in every attribute is the hardest for people, one that differs in a single attribute the
easiest. The delay is ``base + per_attribute * differing``, stretched by a factor drawn from
a seeded generator, so a game replays identically from the same seed and clock.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from setvision.solver.cards import Card
from setvision.solver.sets import find_sets


@dataclass(frozen=True)
class Level:
    """How fast a level plays: seconds to any set, seconds more per attribute that differs."""

    name: str
    base_s: float
    per_attribute_s: float
    spread: float = 0.2  # the delay is stretched by a factor in [1 - spread, 1 + spread]


LEVELS: dict[str, Level] = {
    level.name: level
    for level in (Level("easy", 12.0, 6.0), Level("medium", 6.0, 3.0), Level("hard", 2.0, 1.5))
}


def differing(cards: Sequence[Card]) -> int:
    """How many attributes take three different values among the cards (1 to 4 for a set)."""
    return sum(len(set(values)) == len(cards) for values in zip(*(c.codes for c in cards)))


@dataclass(frozen=True)
class Plan:
    """The set the computer will claim and when (on the game clock)."""

    cards: tuple[Card, Card, Card]
    due: float


class Opponent:
    """Plans one claim per table; ``plan`` is called when the table changes."""

    def __init__(self, level: str, seed: int = 0, name: str = "computer"):
        if level not in LEVELS:
            raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
        self.level = LEVELS[level]
        self.name = name
        self._random = random.Random(seed)

    def delay(self, cards: Sequence[Card]) -> float:
        """Seconds before claiming this set (draws from the generator)."""
        level = self.level
        stretch = 1 + self._random.uniform(-level.spread, level.spread)
        return (level.base_s + level.per_attribute_s * differing(cards)) * stretch

    def plan(self, t: float, table: Sequence[Card]) -> Plan | None:
        """The easiest set on the table (fewest attributes differing, then in deck order)
        and when it will be claimed; None without a set."""
        found = [tuple(table[i] for i in s) for s in find_sets(list(table))]
        if not found:
            return None
        easiest = min(found, key=lambda s: (differing(s), sorted(c.index for c in s)))
        return Plan(tuple(sorted(easiest)), t + self.delay(easiest))
