"""Sets among cards: test, complete, enumerate, and explain a claim in a player's words."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from setvision.solver.cards import ATTRIBUTE_WORDS, ATTRIBUTES, Card


def is_set(a: Card, b: Card, c: Card) -> bool:
    """Three different cards whose every attribute is all the same or all different."""
    if a in (b, c) or b == c:
        return False
    return all((x + y + z) % 3 == 0 for x, y, z in zip(a.codes, b.codes, c.codes))


def third_card(a: Card, b: Card) -> Card:
    """The one card that completes a set with two different cards."""
    if a == b:
        raise ValueError(f"the two cards must differ, got {a} twice")
    return Card.from_codes((-x - y) % 3 for x, y in zip(a.codes, b.codes))


def find_sets(cards: Sequence[Card]) -> list[tuple[int, int, int]]:
    """Every set as sorted 0-based positions into ``cards``, the list sorted; O(n^2).

    Misread layouts may hold the same card twice; every position is then considered.
    """
    positions: dict[Card, list[int]] = defaultdict(list)
    for position, card in enumerate(cards):
        positions[card].append(position)
    found: list[tuple[int, int, int]] = []
    for i, a in enumerate(cards):
        for j in range(i + 1, len(cards)):
            b = cards[j]
            if a == b:
                continue
            found.extend((i, j, k) for k in positions.get(third_card(a, b), ()) if k > j)
    return sorted(found)


@dataclass(frozen=True)
class AttributeCheck:
    """How one attribute reads across the three cards of a claim."""

    attribute: str
    values: tuple[str, str, str]

    @property
    def passes(self) -> bool:
        return len(set(self.values)) != 2

    @property
    def pattern(self) -> str:
        kinds = len(set(self.values))
        return {1: "all the same", 3: "all different"}.get(kinds, "two the same and one different")

    def __str__(self) -> str:
        return f"{ATTRIBUTE_WORDS[self.attribute]}: {', '.join(self.values)}: {self.pattern}"


@dataclass(frozen=True)
class ClaimCheck:
    """The verdict on a claimed set, attribute by attribute."""

    cards: tuple[Card, Card, Card]
    attributes: tuple[AttributeCheck, ...]

    @property
    def distinct(self) -> bool:
        return len(set(self.cards)) == 3

    @property
    def valid(self) -> bool:
        return self.distinct and all(check.passes for check in self.attributes)

    @property
    def failures(self) -> list[AttributeCheck]:
        return [check for check in self.attributes if not check.passes]

    def summary(self) -> str:
        """One line a player accepts: valid, or what breaks the set."""
        if not self.distinct:
            return "not a set: the same card is named twice"
        if self.valid:
            return "valid set"
        return "not a set: " + "; ".join(str(check) for check in self.failures)


def explain(a: Card, b: Card, c: Card) -> ClaimCheck:
    """Check a claim and say, attribute by attribute, why it holds or fails."""
    checks = tuple(
        AttributeCheck(attribute, (a.value(attribute), b.value(attribute), c.value(attribute)))
        for attribute in ATTRIBUTES
    )
    return ClaimCheck((a, b, c), checks)
