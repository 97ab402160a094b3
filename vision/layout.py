"""What flows out of the photo pipeline: cards with outlines and per-attribute confidences."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from setvision.solver import ATTRIBUTES, VALUES, Card, find_sets

#: A card whose four attributes are together right with less than this probability is
#: "uncertain": the pipeline then never answers "no set".
CONFIDENT = 0.9


@dataclass(frozen=True)
class CardReading:
    """One card as read from the photo.

    ``corners_xy`` is (4, 2) float32 in the original photo's pixels, clockwise from the
    top-left of the card as it lies; ``probabilities`` maps each attribute to its three
    values' probabilities (in ``solver.VALUES`` order); ``card`` is the decided identity.
    """

    corners_xy: np.ndarray
    probabilities: dict[str, np.ndarray]
    card: Card

    def __post_init__(self) -> None:
        corners = np.asarray(self.corners_xy)
        if corners.shape != (4, 2):
            raise ValueError(f"corners_xy must have shape (4, 2), got {corners.shape}")
        for attribute in ATTRIBUTES:
            p = self.probabilities.get(attribute)
            if p is None or np.shape(p) != (3,):
                raise ValueError(f"probabilities[{attribute!r}] must have shape (3,)")

    def probability(self, attribute: str) -> float:
        """How sure the reading of one attribute is (probability of the decided value)."""
        value = self.card.value(attribute)
        return float(self.probabilities[attribute][VALUES[attribute].index(value)])

    @property
    def confidence(self) -> float:
        """Probability that all four attributes are read right."""
        return float(np.prod([self.probability(a) for a in ATTRIBUTES]))

    @property
    def confident(self) -> bool:
        return self.confidence >= CONFIDENT

    @property
    def centre(self) -> tuple[float, float]:
        x, y = np.asarray(self.corners_xy).mean(axis=0)
        return float(x), float(y)

    def doubts(self) -> list[tuple[str, str, float, str, float]]:
        """Attributes in doubt: (attribute, chosen, its probability, runner-up, its probability)."""
        found = []
        for attribute in ATTRIBUTES:
            p = np.asarray(self.probabilities[attribute])
            order = np.argsort(-p)
            chosen = VALUES[attribute].index(self.card.value(attribute))
            other = int(order[0] if order[0] != chosen else order[1])
            if p[chosen] < CONFIDENT**0.5 or p[other] > 0.2:
                found.append(
                    (attribute, VALUES[attribute][chosen], float(p[chosen]),
                     VALUES[attribute][other], float(p[other]))
                )  # fmt: skip
        return found


#: Why a card-like outline was not read: no symbols could be made out on it.
NO_SYMBOLS = "no symbols found"
#: Why a card-like outline was not counted: found unsurely and read with little confidence
#: (``vision.read.vetting``); most such shapes are prints or objects, not cards.
UNSURE = "perhaps no card: found unsurely, read with little confidence"
#: How many places where a card may be missed are named in the verdict.
MISSED_NAMED = 2


@dataclass(frozen=True)
class Ignored:
    """An outline that was not read, and why (e.g. cut by the image border)."""

    corners_xy: np.ndarray
    reason: str


@dataclass(frozen=True)
class Layout:
    """Every card read from one photo, numbered 1..n in reading order (list order).

    What follows from the cards (``sets``, ``uncertain``, ``layout_doubts``, ``verdict``) is
    computed on first use and kept: a layout does not change, so neither may those lists.
    """

    image_size: tuple[int, int]
    cards: tuple[CardReading, ...] = ()
    ignored: tuple[Ignored, ...] = ()
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: card-like places not taken for cards (quads): a card may have been missed there
    possible: tuple[np.ndarray, ...] = ()
    #: what went wrong while decoding the photo (corrupt data): part of it may be garbage
    warnings: tuple[str, ...] = ()

    @classmethod
    def empty(cls, image_size: tuple[int, int]) -> Layout:
        return cls(image_size)

    def scaled(self, factor: float) -> Layout:
        """The same layout with every corner multiplied by ``factor`` (e.g. to a smaller copy)."""
        if factor == 1.0:
            return self
        cards = tuple(
            CardReading(c.corners_xy * np.float32(factor), c.probabilities, c.card)
            for c in self.cards
        )
        ignored = tuple(Ignored(i.corners_xy * np.float32(factor), i.reason) for i in self.ignored)
        size = (round(self.image_size[0] * factor), round(self.image_size[1] * factor))
        possible = tuple(q * np.float32(factor) for q in self.possible)
        scaled = Layout(size, cards, ignored, self.timings_ms, possible, self.warnings)
        for same in ("sets", "uncertain"):  # the same cards: what was found of them holds
            if same in self.__dict__:
                scaled.__dict__[same] = self.__dict__[same]
        return scaled

    @cached_property
    def sets(self) -> list[tuple[int, int, int]]:
        """Every set as card ids (1-based, as numbered on the image), sorted."""
        return [tuple(i + 1 for i in found) for found in find_sets([c.card for c in self.cards])]

    @cached_property
    def uncertain(self) -> list[int]:
        """Ids of cards not read confidently."""
        return [i for i, card in enumerate(self.cards, 1) if not card.confident]

    @cached_property
    def layout_doubts(self) -> list[str]:
        """Reasons, besides uncertain cards, not to trust that the cards read are all there is.

        Cards leave and join the table three at a time, so a real layout holds a multiple of
        three; another count means a card was missed, cut off or taken for a card wrongly.
        """
        doubts = list(self.warnings)
        blank = sum(i.reason == NO_SYMBOLS for i in self.ignored)
        unsure = sum(i.reason == UNSURE for i in self.ignored)
        partial = len(self.ignored) - blank - unsure
        if partial:
            doubts.append(f"{partial} card{'s' if partial > 1 else ''} only partly visible")
        if blank:
            doubts.append(
                f"{blank} card-like shape{'s' if blank > 1 else ''} without readable symbols"
            )
        if unsure:
            doubts.append(
                f"{unsure} card-like shape{'s' if unsure > 1 else ''} too unsure to count as "
                f"{'cards' if unsure > 1 else 'a card'}"
            )
        for quad in self.possible[:MISSED_NAMED]:
            x, y = np.asarray(quad, float).mean(axis=0)
            doubts.append(f"a card may be missed near ({x:.0f}, {y:.0f})")
        if len(self.possible) > MISSED_NAMED:
            doubts.append(f"{len(self.possible) - MISSED_NAMED} more places may hold a card")
        if self.cards and len(self.cards) % 3:
            doubts.append(
                f"{len(self.cards)} card{'s' if len(self.cards) > 1 else ''} found, "
                "not a multiple of three: one may be missed"
            )
        return doubts

    @cached_property
    def verdict(self) -> str:
        """``sets``, ``no_set`` (every card confident), ``uncertain`` or ``no_cards``."""
        if not self.cards:
            return "no_cards"
        if self.sets:
            return "sets"
        return "uncertain" if self.uncertain or self.layout_doubts else "no_set"


def describe_card_doubt(layout: Layout, card_id: int) -> str:
    """E.g. ``card 7 (purple 55% / red 45%)``: the shakiest attribute of an uncertain card."""
    reading = layout.cards[card_id - 1]
    doubts = reading.doubts()
    if not doubts:
        return f"card {card_id} ({reading.confidence:.0%} sure)"
    attribute, chosen, p_chosen, other, p_other = min(doubts, key=lambda d: d[2])
    return f"card {card_id} ({chosen} {p_chosen:.0%} / {other} {p_other:.0%})"


def verdict_message(layout: Layout, reveal: str = "all") -> str:
    """The one line a player reads: how many sets, or what the dealer should do, or why not."""
    n = len(layout.cards)
    if layout.verdict == "no_cards":
        # cards partly seen, or places where one may lie, are worth more than "none"
        doubts = layout.layout_doubts
        return f"no card read: {'; '.join(doubts)}" if doubts else "no cards found"
    if layout.verdict == "uncertain":
        parts = [describe_card_doubt(layout, i) for i in layout.uncertain[:3]]
        if len(layout.uncertain) > 3:
            parts.append(f"{len(layout.uncertain) - 3} more cards")
        parts += layout.layout_doubts
        return f"uncertain: {'; '.join(parts)}; no set among the cards as read"
    if layout.verdict == "no_set":
        return f"no set among {n} cards: add three"
    count = len(layout.sets)
    if reveal == "none":
        return f"{n} cards"
    return f"{count} set{'s' if count != 1 else ''} among {n} cards"
