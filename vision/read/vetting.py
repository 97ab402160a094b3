"""Outlines the finder was unsure of and the reader cannot read are set aside, not counted.

On tables it never saw the finder takes a few prints on cloths and bags, railings or tiles for
cards. Read as a card, such a shape reads with little confidence: its "symbols" are none of a
SET card's. Counted as a card it would be numbered, join sets and spoil the verdict; set aside,
it is named as a card-like shape, and "no set" is still never said over it. Either doubt alone
keeps the card: cards the finder is unsure of (half covered, in shade) mostly read well, and
cards read with little confidence (worn, under glare) are mostly found surely.

A third way aside is a textured margin: a card's blank paper between its edge and its symbols
is smooth, a printed bag's, a sign's or a basket's is not. Cards read unsurely are often in
glare, blur or shade, their margins rough too, so only a strongly textured margin counts, and
only on an outline read with little confidence.

Every level was chosen on held-out photos (every photo judged by a finder fitted without its
source or capture session), as the share of photos read with every card and nothing extra:
``setvision eval --find --loso --read`` prints the tables they were chosen from.
"""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

#: The finder is unsure of an outline below this probability that it is a card.
FINDER_UNSURE = 0.9
#: The reader cannot read an outline when its four attributes are right together with less
#: than this probability (``CardReading.confidence``).
READER_UNSURE = 0.4
#: An outline whose margin is textured is set aside when read with less confidence than this.
TEXTURED_READER_UNSURE = 0.5
#: A margin is textured above this median lightness gradient (grey levels per pixel of the
#: laid-out card, ``rectify.CARD_SIZE``).
TEXTURED_MARGIN = 3.0
#: The margin band measured, as shares of the laid-out card's half width and half height from
#: its centre: beyond the symbols, short of the card's edge.
MARGIN_BAND = (0.72, 0.9)


def margin_texture(card: np.ndarray) -> float:
    """The median lightness gradient (grey levels per pixel) over the ``MARGIN_BAND`` of a
    laid-out card image (BGR): about 0.5 on a card's paper, several on a print's."""
    grey = cv2.cvtColor(card, cv2.COLOR_BGR2GRAY).astype(np.float32)
    gradient = cv2.magnitude(cv2.Sobel(grey, cv2.CV_32F, 1, 0), cv2.Sobel(grey, cv2.CV_32F, 0, 1))
    values = gradient.ravel().take(_band_indices(grey.shape))
    middle = values.size // 2
    if values.size % 2:
        median = np.partition(values, middle)[middle]
    else:
        below, above = np.partition(values, [middle - 1, middle])[middle - 1 : middle + 1]
        median = (below + above) / 2
    return float(median) / 8  # Sobel's 3x3 weights sum to 8 per pixel step


@lru_cache(maxsize=4)
def _band_indices(shape: tuple[int, int]) -> np.ndarray:
    """The flat indices of a laid-out card's pixels in its ``MARGIN_BAND``."""
    height, width = shape
    across = np.abs(np.arange(width) - (width - 1) / 2) / (width / 2)
    down = np.abs(np.arange(height) - (height - 1) / 2) / (height / 2)
    reach = np.maximum(across[None, :], down[:, None])
    return np.flatnonzero((reach >= MARGIN_BAND[0]) & (reach <= MARGIN_BAND[1]))


def set_aside(
    found_probability: float,
    confidence: float,
    margin: float = 0.0,
    finder_unsure: float = FINDER_UNSURE,
    reader_unsure: float = READER_UNSURE,
    textured_margin: float = TEXTURED_MARGIN,
) -> bool:
    """Whether an outline found with ``found_probability``, read with ``confidence`` and whose
    ``margin_texture`` is ``margin`` is set aside as a card-like shape rather than counted as a
    card (other levels: to measure)."""
    unsure = found_probability < finder_unsure and confidence < reader_unsure
    return unsure or (confidence < TEXTURED_READER_UNSURE and margin > textured_margin)
