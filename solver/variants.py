"""Game variants: which cards are in the deck and how many the dealer lays out."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from itertools import product

from setvision.solver.cards import ATTRIBUTES, VALUES, Card
from setvision.solver.errors import SetvisionError

#: Largest number of cards holding no set, by number of varying attributes (cap sets of AG(n, 3)).
_LARGEST_SET_FREE = {1: 2, 2: 4, 3: 9, 4: 20}


@dataclass(frozen=True)
class Variant:
    """A deck (some attributes may be fixed) and the size of the normal layout."""

    name: str
    description: str
    layout_size: int = 12
    fixed: dict[str, str] = field(default_factory=dict)

    @cached_property
    def deck(self) -> tuple[Card, ...]:
        choices = [
            (self.fixed[attribute],) if attribute in self.fixed else VALUES[attribute]
            for attribute in ATTRIBUTES
        ]
        return tuple(Card(int(n), c, s, h) for n, c, s, h in product(*choices))

    @property
    def varying_attributes(self) -> int:
        return len(ATTRIBUTES) - len(self.fixed)

    @property
    def largest_set_free(self) -> int:
        """The most cards that can lie without a set (20 for the full deck)."""
        return _LARGEST_SET_FREE[self.varying_attributes]

    @property
    def max_layout(self) -> int:
        """The dealer adds three at a time but never beyond the size that always holds a set."""
        size = self.layout_size
        while size <= self.largest_set_free:
            size += 3
        return size

    def holds(self, card: Card) -> bool:
        return all(card.value(attribute) == value for attribute, value in self.fixed.items())


STANDARD = Variant("standard", "81 cards, 12 laid out")
BEGINNER = Variant("beginner", "27 solid cards, 12 laid out", fixed={"shading": "solid"})
BEGINNER_9 = Variant(
    "beginner-9", "27 solid cards, 9 laid out (Gigamic)", layout_size=9, fixed={"shading": "solid"}
)
VARIANTS: dict[str, Variant] = {v.name: v for v in (STANDARD, BEGINNER, BEGINNER_9)}


def get_variant(name: str) -> Variant:
    try:
        return VARIANTS[name]
    except KeyError:
        raise SetvisionError(
            f"unknown variant {name!r}; choose one of {', '.join(VARIANTS)}"
        ) from None
