"""A SET card: four attributes, each with three values.

Text form: ``NUMBER-COLOR-SHADING-SHAPE``, e.g. ``2-red-striped-oval`` (case-insensitive,
tokens in that order). Each attribute value also has a code 0, 1 or 2 (its position in
``VALUES``): three cards form a set exactly when every attribute's codes sum to a multiple of 3.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from setvision.solver.errors import CardParseError

ATTRIBUTES: tuple[str, ...] = ("number", "color", "shading", "shape")
VALUES: dict[str, tuple[str, ...]] = {
    "number": ("1", "2", "3"),
    "color": ("red", "green", "purple"),
    "shading": ("solid", "striped", "open"),
    "shape": ("oval", "diamond", "squiggle"),
}
#: How a player names the attribute in a sentence.
ATTRIBUTE_WORDS: dict[str, str] = {
    "number": "number",
    "color": "colour",
    "shading": "shading",
    "shape": "shape",
}


@dataclass(frozen=True, order=True)
class Card:
    """One card; ``number`` is 1..3, the other fields are words from ``VALUES``."""

    number: int
    color: str
    shading: str
    shape: str

    def __post_init__(self) -> None:
        if str(self.number) not in VALUES["number"] or isinstance(self.number, bool):
            raise CardParseError(f"number must be 1, 2 or 3, got {self.number!r}")
        for attribute in ATTRIBUTES[1:]:
            value = getattr(self, attribute)
            if value not in VALUES[attribute]:
                allowed = ", ".join(VALUES[attribute])
                raise CardParseError(f"{attribute} must be one of {allowed}, got {value!r}")

    @property
    def codes(self) -> tuple[int, int, int, int]:
        """Attribute codes 0..2 in the order of ``ATTRIBUTES``."""
        return (
            self.number - 1,
            VALUES["color"].index(self.color),
            VALUES["shading"].index(self.shading),
            VALUES["shape"].index(self.shape),
        )

    @property
    def index(self) -> int:
        """Position 0..80 of the card in the full deck (codes read as base-3 digits)."""
        n, c, s, h = self.codes
        return ((n * 3 + c) * 3 + s) * 3 + h

    @classmethod
    def from_codes(cls, codes: Iterable[int]) -> Card:
        n, c, s, h = (int(x) for x in codes)
        return cls(n + 1, VALUES["color"][c], VALUES["shading"][s], VALUES["shape"][h])

    @classmethod
    def from_index(cls, index: int) -> Card:
        if not 0 <= index < 81:
            raise ValueError(f"card index must be 0..80, got {index}")
        return cls.from_codes((index // 27, index // 9 % 3, index // 3 % 3, index % 3))

    def value(self, attribute: str) -> str:
        """The attribute's value as a word (the number as a digit)."""
        return str(getattr(self, attribute))

    def __str__(self) -> str:
        return f"{self.number}-{self.color}-{self.shading}-{self.shape}"


def parse_card(text: str) -> Card:
    """Read ``2-red-striped-oval``; the error names the token that is wrong."""
    tokens = text.strip().lower().split("-")
    if len(tokens) != 4:
        raise CardParseError(
            f"bad card {text!r}: expected NUMBER-COLOR-SHADING-SHAPE, e.g. 2-red-striped-oval"
        )
    for attribute, token in zip(ATTRIBUTES, tokens):
        if token not in VALUES[attribute]:
            allowed = ", ".join(VALUES[attribute])
            raise CardParseError(f"bad card {text!r}: {token!r} is not a {attribute} ({allowed})")
    return Card(int(tokens[0]), tokens[1], tokens[2], tokens[3])


def parse_cards(texts: Iterable[str]) -> list[Card]:
    """Parse several card texts; commas may separate cards within one argument."""
    return [parse_card(part) for text in texts for part in text.split(",") if part.strip()]
