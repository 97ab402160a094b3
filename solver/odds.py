"""How often a random layout holds no set, by simulation, with a confidence interval."""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from setvision.solver.sets import find_sets, third_card
from setvision.solver.variants import STANDARD, Variant

#: More layouts than this are refused: 100 million take about 6 minutes on one core.
MAX_TRIALS = 100_000_000


@dataclass(frozen=True)
class Odds:
    variant: str
    layout_size: int
    trials: int
    without_set: int
    sets_in_deck: int

    @property
    def probability(self) -> float:
        return self.without_set / self.trials

    def interval(self, z: float = 1.96) -> tuple[float, float]:
        """Wilson score interval (95% by default); sound even when no layout lacked a set."""
        n, p = self.trials, self.probability
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return max(0.0, centre - half), min(1.0, centre + half)


def sets_in_deck(variant: Variant = STANDARD) -> int:
    """Exact count of sets among all the variant's cards (1080 for the full deck)."""
    return len(find_sets(variant.deck))


def simulate(
    layout_size: int = 12,
    trials: int = 100_000,
    variant: Variant = STANDARD,
    seed: int | None = 0,
    batch: int = 20_000,
) -> Odds:
    """Deal ``trials`` random layouts and count those without a set."""
    deck = variant.deck
    if not 3 <= layout_size <= len(deck):
        raise ValueError(f"layout size must be 3..{len(deck)}, got {layout_size}")
    if not 1 <= trials <= MAX_TRIALS:
        raise ValueError(f"trials must be 1..{MAX_TRIALS:,}, got {trials:,}")
    if seed is not None and seed < 0:
        raise ValueError(f"seed must be 0 or more, got {seed}")
    position = {card: i for i, card in enumerate(deck)}
    completes = np.full((len(deck), len(deck)), -1, dtype=np.int64)
    for (i, a), (j, b) in combinations(enumerate(deck), 2):
        completes[i, j] = completes[j, i] = position.get(third_card(a, b), -1)
    pairs = np.array(list(combinations(range(layout_size), 2)))
    rng = np.random.default_rng(seed)
    without = 0
    done = 0
    while done < trials:
        n = min(batch, trials - done)
        layouts = np.argsort(rng.random((n, len(deck))), axis=1)[:, :layout_size]
        present = np.zeros((n, len(deck) + 1), dtype=bool)  # last column: "not in this deck"
        np.put_along_axis(present, layouts, True, axis=1)
        thirds = completes[layouts[:, pairs[:, 0]], layouts[:, pairs[:, 1]]]
        has_set = np.take_along_axis(present, thirds, axis=1).any(axis=1)
        without += int(n - has_set.sum())
        done += n
    return Odds(variant.name, layout_size, trials, without, sets_in_deck(variant))
