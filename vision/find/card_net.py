"""A small convolutional net that marks where cards lie: a second opinion for the finder.

The net (``vision/models/finder_net.onnx``, run by OpenCV's ``dnn``) sees the work image
shrunk to ``INPUT_LONG_SIDE`` and gives two probability maps at ``STRIDE`` times less: each
card's interior (the card shrunk about its centre by half) and the whole card. Interiors stay
apart where cards touch, so each interior blob is one card; its outline is the rectangle around
the card-map pixels it wins. The finder asks its slow previous maker only where the net sees a
card the fast makers' cards leave unexplained, lets it look only where the card map sees card
paper, and names a doubtful candidate as a possible miss only there. Its training recipe is
``tools/train_card_net.py``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import cv2
import numpy as np
from setvision.solver.errors import SetvisionError

#: The net's input long side (pixels).
INPUT_LONG_SIDE = 384
#: The maps' pixel, in input pixels.
STRIDE = 2
#: An interior blob smaller than this (map pixels) is no card.
MIN_BLOB = 4
#: A map pixel is card (not table) at this probability.
CARD_LEVEL = 0.5
#: Added to the spread when normalising (grey levels): a flat frame is not blown up into noise.
SPREAD_FLOOR = 8.0


class CardNetError(SetvisionError):
    """The card net's model file is missing or damaged."""


def net_path(held_out: str | None = None) -> Path:
    """The shipped net's file, or (``held_out``) a net fitted without part of the labelled
    photos, for judging those photos in ``setvision eval --find``."""
    models = Path(str(resources.files("setvision.vision") / "models"))
    if held_out is None:
        return models / "finder_net.onnx"
    return models / "held_out" / f"finder_net_{held_out}.onnx"


_nets = threading.local()  # a dnn.Net is not to be shared between threads


def load_card_net(held_out: str | None = None) -> cv2.dnn.Net:
    """The net (see ``net_path``), loaded once per thread."""
    cache = _nets.__dict__.setdefault("by_name", {})
    if held_out not in cache:
        path = net_path(held_out)
        if not path.is_file():
            raise CardNetError(f"the card net is missing ({path.name}): reinstall setvision")
        try:
            cache[held_out] = cv2.dnn.readNetFromONNX(str(path))
        except cv2.error:
            raise CardNetError(f"{path.name}: not a card net: reinstall setvision") from None
    return cache[held_out]


def normalise(image: np.ndarray) -> np.ndarray:
    """Each channel less its mean, over the image's spread: the same under any light level."""
    x = image.astype(np.float32)
    x -= np.asarray(cv2.mean(image)[:3], np.float32)  # numpy's mean over pixels takes 1 ms
    x /= x.std() + SPREAD_FLOOR
    return x


@dataclass(frozen=True)
class CardMaps:
    """The net's interior and card probabilities (2, h, w), and the factor from the image they
    were made from to the net's input."""

    maps: np.ndarray
    factor: float


def net_input(image: np.ndarray) -> tuple[np.ndarray, float]:
    """The net's input for ``image`` ((H, W, 3) uint8 BGR): a (1, 3, h, w) float32 array, and
    the factor it was shrunk by."""
    height, width = image.shape[:2]
    factor = INPUT_LONG_SIDE / max(height, width)
    size = (max(1, round(width * factor)), max(1, round(height * factor)))
    small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    return normalise(small).transpose(2, 0, 1)[None].copy(), factor


def card_maps(image: np.ndarray, net: cv2.dnn.Net) -> CardMaps:
    """The net's maps of ``image`` ((H, W, 3) uint8 BGR)."""
    blob, factor = net_input(image)
    net.setInput(blob)
    logits = net.forward()[0]
    return CardMaps(0.5 + 0.5 * np.tanh(0.5 * logits), factor)  # the logistic, never overflowing


@dataclass(frozen=True)
class CardPaper:
    """The net's card probability map ((h, w), a pixel per ``STRIDE`` input pixels) and the
    factor from the image it was made from to the net's input: where the net takes the
    picture for card at all."""

    card: np.ndarray
    factor: float

    def at(self, points: np.ndarray) -> np.ndarray:
        """The card probability at each of ``points`` ((N, 2), pixels of the image the map
        was made from; the nearest map pixel's)."""
        points = np.asarray(points, np.float64).reshape(-1, 2) * self.factor
        cells = np.rint((points - (STRIDE - 1) / 2) / STRIDE).astype(np.int64)
        height, width = self.card.shape
        x = np.clip(cells[:, 0], 0, width - 1)
        y = np.clip(cells[:, 1], 0, height - 1)
        return self.card[y, x]


def card_paper(maps: CardMaps) -> CardPaper:
    """The card map of ``maps`` alone (a copy: the interior map is not kept with it)."""
    return CardPaper(maps.maps[1].copy(), maps.factor)


def net_cards(maps: CardMaps, interior: float) -> list[np.ndarray]:
    """One quad (4, 2) per interior blob of at least ``interior`` probability, in the pixels of
    the image the maps were made from: the rectangle around the card-map pixels it wins."""
    inside, card = maps.maps[0], maps.maps[1] > CARD_LEVEL
    count, labels, stats, _ = cv2.connectedComponentsWithStats(
        (inside >= interior).astype(np.uint8), connectivity=8
    )
    if count < 2:
        return []
    markers = labels.astype(np.int32)
    markers[~card] = count  # the table: grown into by no card
    markers[card & (labels == 0)] = 0
    relief = (255 - maps.maps[1] * 255).astype(np.uint8)
    cv2.watershed(cv2.cvtColor(relief, cv2.COLOR_GRAY2BGR), markers)
    lines = (markers == -1).astype(np.uint8)  # the watershed's borders: shared by both sides
    quads = []
    for k in range(1, count):
        if stats[k, cv2.CC_STAT_AREA] < MIN_BLOB:
            continue
        won = (markers == k).astype(np.uint8)
        won |= cv2.dilate(won, np.ones((3, 3), np.uint8)) & lines & card
        contours, _ = cv2.findContours(won, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        if not contours:
            continue
        points = max(contours, key=cv2.contourArea).reshape(-1, 2).astype(np.float32)
        centre, (w, h), angle = cv2.minAreaRect(points)
        box = cv2.boxPoints((centre, (w + 1, h + 1), angle))
        quads.append(((box * STRIDE + (STRIDE - 1) / 2) / maps.factor).astype(np.float32))
    return quads
