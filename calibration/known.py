"""A photo measured once and read in several ways, its cards in reading order.

Calibration needs each card's features in the numbering `setvision detect` prints (so the user
can name the cards), and the measurement compares readers on the same cards; both measure a
photo once and classify it as often as they like.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from setvision.vision.image import Photo
from setvision.vision.layout import Ignored, Layout
from setvision.vision.order import reading_order
from setvision.vision.pipeline import CardReader, MeasuredCard
from setvision.vision.read.features import CardFeatures


class _Premeasured(CardReader):
    """A reader whose measurement is already done: only classification and ordering run (and
    the second reading of outlines that would be set aside, ``read_unsure_again``, as
    ``CardReader.read`` gives it)."""

    def __init__(self, reader: CardReader, measured: list[MeasuredCard], ignored: list[Ignored]):
        super().__init__(reader.models, reader.adjust)
        self._measured, self._ignored = measured, ignored

    def measure(
        self, image: np.ndarray
    ) -> tuple[list[MeasuredCard], list[Ignored], dict, list[np.ndarray]]:
        return list(self._measured), list(self._ignored), {}, []


@dataclass(frozen=True)
class MeasuredPhoto:
    """A photo and its measured cards, numbered 1..n in reading order (list order)."""

    photo: Photo
    cards: tuple[MeasuredCard, ...]
    ignored: tuple[Ignored, ...]

    @property
    def features(self) -> list[CardFeatures]:
        return [m.features for m in self.cards]

    @property
    def quads(self) -> list[np.ndarray]:
        """(4, 2) corners of each card in the original photo's pixels."""
        return [m.outline.corners_xy * np.float32(self.photo.scale) for m in self.cards]

    def read(self, reader: CardReader) -> Layout:
        """The layout ``reader`` makes of these cards (its model and adjuster; no re-measuring)."""
        return _Premeasured(reader, list(self.cards), list(self.ignored)).read_photo(self.photo)


def measure_photo(reader: CardReader, photo: Photo) -> MeasuredPhoto:
    """Find and measure every card of a photo once, in reading order."""
    measured, ignored, _, _ = reader.measure(photo.image)
    order = reading_order([m.outline.corners_xy for m in measured])
    return MeasuredPhoto(photo, tuple(measured[i] for i in order), tuple(ignored))
