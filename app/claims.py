"""Settling a claim on a photo: are the three cards named by their numbers a set?

In: a photo's path, three card numbers (as ``detect`` numbers the cards; ``card_numbers``
reads them from what the user typed), the reader and its profile. Out: a ``PhotoClaim``: the
reading, the three cards, the check (which attribute fails, if any) and the doubt about each
card not read confidently. A photo without cards, a number that names no card, or the same
card twice is a ``SetvisionError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from setvision.app.readers import ProfileChoice
from setvision.app.reading import Reading, read_photo
from setvision.solver import ClaimCheck, explain
from setvision.solver.errors import SetvisionError
from setvision.vision.layout import CardReading, describe_card_doubt
from setvision.vision.pipeline import CardReader


@dataclass(frozen=True)
class PhotoClaim:
    """A claimed set on a photo: the cards as numbered, their readings, the verdict on them.

    ``doubts`` maps the number of each card not read confidently to what is in doubt, e.g.
    ``card 7 (purple 55% / red 45%)``.
    """

    reading: Reading
    numbers: tuple[int, int, int]
    cards: tuple[CardReading, CardReading, CardReading]
    check: ClaimCheck
    doubts: dict[int, str]

    @property
    def confident(self) -> bool:
        """Every card of the claim read confidently: the answer can be trusted as it is."""
        return not self.doubts


def card_numbers(ids: Sequence[str]) -> tuple[int, int, int]:
    """Three card numbers from the words the user gave."""
    if len(ids) != 3:
        raise SetvisionError("check IMAGE takes three card numbers, e.g. check photo.jpg 2 7 12")
    try:
        first, second, third = (int(i) for i in ids)
    except ValueError:
        raise SetvisionError(f"card numbers must be whole numbers, got {' '.join(ids)}") from None
    return first, second, third


def check_claim(
    path: str, numbers: Sequence[int], reader: CardReader, profile: ProfileChoice
) -> PhotoClaim:
    """Read the photo once and judge the three cards ``numbers``."""
    reading = read_photo(path, reader, profile)
    layout = reading.layout
    n = len(layout.cards)
    if n == 0:
        raise SetvisionError(f"{path}: no cards found")
    bad = [i for i in numbers if not 1 <= i <= n]
    if bad:
        raise SetvisionError(f"{path}: there are cards 1 to {n}; no card {bad[0]}")
    if len(set(numbers)) != 3:
        raise SetvisionError("name three different cards")
    numbers = tuple(numbers)
    cards = tuple(layout.cards[i - 1] for i in numbers)
    doubts = {
        number: describe_card_doubt(layout, number)
        for number, card in zip(numbers, cards)
        if not card.confident
    }
    return PhotoClaim(reading, numbers, cards, explain(*(c.card for c in cards)), doubts)
