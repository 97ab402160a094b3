"""Black bars around a picture: a portrait video or photo shown in a landscape frame.

Bars hold no card, yet they skew every level the finder takes from the whole picture (its
white, its paper level) and leave the card net a third of its input for the cards. The finder
looks only at what lies between them, at the scale the whole frame would be read at.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

#: A row or column of the frame's edge whose every pixel is at most this grey level (0-255) is
#: part of a black bar: a bar's black decodes to 0 give or take compression's noise, while a
#: black table in a photo mostly reaches higher somewhere along a row.
BAR_LEVEL = 10
#: Bars are cut away only when together they take at least this share of the frame's width or
#: height (a 4:3 picture in a 16:9 frame: 0.25; a portrait one: 0.68). A sliver of dark
#: pixels along a webcam's edge saves nothing, and cutting it would move the work copy's pixel
#: grid and with it the outlines of the cards the reader's models were fitted on.
MIN_BARS_SHARE = 0.1


@dataclass(frozen=True)
class Content:
    """The picture between a frame's bars: columns ``x0`` to ``x1`` and rows ``y0`` to ``y1``
    (ends excluded); the whole frame when it has none."""

    x0: int
    y0: int
    x1: int
    y1: int

    def of(self, image: np.ndarray) -> np.ndarray:
        """The content of ``image`` (a contiguous copy, or ``image`` itself when it has no bars)."""
        if self.is_whole(image):
            return image
        return np.ascontiguousarray(image[self.y0 : self.y1, self.x0 : self.x1])

    def is_whole(self, image: np.ndarray) -> bool:
        """Whether this is all of ``image`` (it has no bars)."""
        return (self.x0, self.y0, self.x1, self.y1) == (0, 0, image.shape[1], image.shape[0])

    @property
    def offset(self) -> np.ndarray:
        """Add to the content's pixel coordinates to get the frame's."""
        return np.array([self.x0, self.y0], np.float32)


def content(image: np.ndarray) -> Content:
    """The picture between the black bars of ``image`` ((H, W, 3) uint8 BGR): every row and
    column outside it is dark throughout (``BAR_LEVEL``), and the bars are no sliver
    (``MIN_BARS_SHARE``). A frame dark throughout is all content (there is nothing to part
    from its bars)."""
    height, width = image.shape[:2]
    whole = Content(0, 0, width, height)
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    rows = np.flatnonzero(grey.max(axis=1) > BAR_LEVEL)
    columns = np.flatnonzero(grey.max(axis=0) > BAR_LEVEL)
    if not len(rows):
        return whole
    inside = Content(int(columns[0]), int(rows[0]), int(columns[-1]) + 1, int(rows[-1]) + 1)
    bars = max((width - inside.x1 + inside.x0) / width, (height - inside.y1 + inside.y0) / height)
    return inside if bars >= MIN_BARS_SHARE else whole
