"""One forward pass from a photo to a Layout: validate, find, rectify, measure, classify, settle."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import cv2
import numpy as np
from setvision.solver import ATTRIBUTES
from setvision.vision.find.finder import find_cards
from setvision.vision.find.outlines import Outline
from setvision.vision.image import Photo, as_bgr
from setvision.vision.layout import NO_SYMBOLS, UNSURE, CardReading, Ignored, Layout
from setvision.vision.order import reading_order
from setvision.vision.read.classify import AttributeModels, load_models
from setvision.vision.read.features import CardFeatures, complete_row, extract
from setvision.vision.read.rectify import rectify
from setvision.vision.read.settle import settle
from setvision.vision.read.vetting import set_aside

#: Adjusts a layout's probabilities (e.g. per-photo colour calibration); must not reorder cards.
Adjuster = Callable[[list[CardFeatures], dict[str, np.ndarray]], dict[str, np.ndarray]]


@dataclass(frozen=True)
class MeasuredCard:
    """A found card before classification: where it is and what was measured."""

    outline: Outline
    features: CardFeatures
    #: the finder's probability that the outline is a card
    found_probability: float = 1.0


def symbols_complete(features: CardFeatures, card_size: tuple[int, int]) -> bool:
    """The symbols stand alike, centred and evenly spaced: none is cut off or covered."""
    return complete_row(features.symbols, card_size[0])


def _upright(features: CardFeatures) -> bool:
    """Symbols were found and stand upright, as they do on a card laid landscape."""
    if not features.symbols:
        return False
    boxes = [cv2.boundingRect(c) for c in features.symbols]
    return sum(h > w for _, _, w, h in boxes) * 2 > len(boxes)


class CardReader:
    """Reads SET cards from images with a fixed model (and optional calibration)."""

    def __init__(self, models: AttributeModels | None = None, adjust: Adjuster | None = None):
        self.models = models if models is not None else load_models()
        self.adjust = adjust

    def measure(
        self, image: np.ndarray
    ) -> tuple[list[MeasuredCard], list[Ignored], dict, list[np.ndarray]]:
        """Find and measure every card of a BGR image (corners in its own pixels); also the
        card-like places not taken for cards."""
        timings: dict[str, float] = {}
        start = time.perf_counter()
        found = find_cards(image)
        outlines = found.outlines
        timings["find"] = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        measured, ignored = [], []
        for outline, probability in zip(outlines, found.probabilities):
            result = self.measure_outline(image, outline)
            if isinstance(result, MeasuredCard):
                measured.append(replace(result, found_probability=probability))
            else:
                ignored.append(result)
        timings["measure"] = (time.perf_counter() - start) * 1000
        return measured, ignored, timings, found.possible

    @staticmethod
    def measure_outline(image: np.ndarray, outline: Outline) -> MeasuredCard | Ignored:
        """Measure one outline of a BGR image, or say why it cannot be read as a card."""
        lengthwise = np.roll(outline.corners_xy, -outline.long_side, axis=0)
        card = rectify(image, lengthwise, long_side=False)
        features = extract(card)
        if not _upright(features):
            # The detector judged the card's length from its symbols; if they still lie flat,
            # the other way round may read better.
            turned = rectify(image, np.roll(lengthwise, 1, axis=0), long_side=False)
            turned_features = extract(turned)
            if _upright(turned_features):
                card, features = turned, turned_features
        size = (card.shape[1], card.shape[0])
        if not features.symbols:
            return Ignored(outline.corners_xy, NO_SYMBOLS)
        if outline.touches_border and not symbols_complete(features, size):
            return Ignored(outline.corners_xy, "cut by the image border")
        if outline.occluded and not symbols_complete(features, size):
            return Ignored(outline.corners_xy, "partly covered by another card")
        return MeasuredCard(outline, features)

    def classify(self, measured: list[MeasuredCard]) -> list[CardReading]:
        """Attribute probabilities, calibration, and identities settled across the layout."""
        features = [m.features for m in measured]
        probabilities = self.models.predict(features)
        if self.adjust is not None and features:
            probabilities = self.adjust(features, probabilities)
        cards = settle(probabilities) if features else []
        return [
            CardReading(
                m.outline.corners_xy,
                {a: np.asarray(probabilities[a][i], dtype=np.float64) for a in ATTRIBUTES},
                cards[i],
            )
            for i, m in enumerate(measured)
        ]

    def read(
        self,
        image: np.ndarray,
        scale: float = 1.0,
        image_size=None,
        warnings: tuple[str, ...] = (),
    ) -> Layout:
        """Read every card of an image; ``scale`` maps its pixels to the original photo's.

        ``warnings`` (from decoding: the picture may be partly garbage) keep the verdict from
        ``no_set``."""
        image = as_bgr(image)
        total = time.perf_counter()
        measured, ignored, timings, possible = self.measure(image)
        start = time.perf_counter()
        readings = self.classify(measured)
        aside = [set_aside(m.found_probability, r.confidence) for m, r in zip(measured, readings)]
        if any(aside):  # read again without them: a deck's cards are settled together
            ignored += [Ignored(m.outline.corners_xy, UNSURE) for m, a in zip(measured, aside) if a]
            measured = [m for m, a in zip(measured, aside) if not a]
            readings = self.classify(measured)
        timings["classify"] = (time.perf_counter() - start) * 1000
        order = reading_order([r.corners_xy for r in readings])
        readings = [readings[i] for i in order]
        timings["total"] = (time.perf_counter() - total) * 1000
        size = (image.shape[1], image.shape[0])
        layout = Layout(size, tuple(readings), tuple(ignored), timings, tuple(possible), warnings)
        layout = layout.scaled(scale)
        if image_size is not None:
            layout = replace(layout, image_size=tuple(image_size))
        return layout

    def read_photo(self, photo: Photo) -> Layout:
        return self.read(photo.image, photo.scale, photo.size, photo.warnings)
