"""An open symbol whose outline fades at one end (glare, blur) keeps its whole shape.

The strict ink map stops where the outline fades, and the open shape left is closed across
the gap: an oval loses an end and looks like a squiggle. The faint ink joined to the strong
(``features._with_faint_ends``) gives the shape its end back; number, colour and fill are
measured as before.
"""

from __future__ import annotations

import cv2
import numpy as np
from setvision.vision.read.features import _read_ink, paper_model

DARK, FAINT = (60, 40, 200), (170, 160, 225)
TOP, BOTTOM, RADIUS = 18, 79, 11


def _open_ovals(fading_end: bool) -> np.ndarray:
    """A card (150x97) of three open red ovals, each with its top end faint when asked."""
    card = np.full((97, 150, 3), 235, np.uint8)
    for x in (45, 75, 105):
        top_colour = FAINT if fading_end else DARK
        cv2.ellipse(card, (x, TOP + RADIUS), (RADIUS, RADIUS), 0, 180, 360, top_colour, 2)
        cv2.ellipse(card, (x, BOTTOM - RADIUS), (RADIUS, RADIUS), 0, 0, 180, DARK, 2)
        for side in (x - RADIUS, x + RADIUS):
            cv2.line(card, (side, TOP + RADIUS), (side, BOTTOM - RADIUS), DARK, 2)
    return cv2.GaussianBlur(card, (3, 3), 0)


def _heights(contours: list[np.ndarray]) -> list[int]:
    return [cv2.boundingRect(c)[3] for c in contours]


def test_an_outline_fading_at_one_end_keeps_its_end_for_the_shape():
    card = _open_ovals(fading_end=True)
    read = _read_ink(card, paper_model(card))
    whole = _read_ink(_open_ovals(False), paper_model(_open_ovals(False)))
    assert len(read.contours) == len(read.outlines) == 3
    # the strict map loses the faint end (cut across); the shape's outline has it
    assert max(_heights(read.contours)) < 0.9 * min(_heights(whole.outlines))
    for outline, full in zip(read.outlines, whole.outlines):
        assert abs(cv2.boundingRect(outline)[3] - cv2.boundingRect(full)[3]) <= 2
        assert cv2.contourArea(outline) >= 0.95 * cv2.contourArea(full)


def test_a_whole_outline_is_measured_the_same_both_ways():
    card = _open_ovals(fading_end=False)
    read = _read_ink(card, paper_model(card))
    assert [cv2.boundingRect(c) for c in read.contours] == [
        cv2.boundingRect(c) for c in read.outlines
    ]
