"""A place where the card net sees a card, outlined again from the paper and edges around it.

The net's outline of a card is coarse (its maps step 4 work pixels) and a rectangle, while a
card seen at a slant is a parallelogram; the finder's makers may have missed the card because
its corners lie further from square than any card they propose (``MAX_ANGLE_ERROR``), or
because the whole photo's levels do not part it from its table. Around one place those levels
can be the place's own: the region of a crop, at a fixed size per card, that holds the place's
centre and follows most of it is the card's outline, read as one more variant of the place
(``vision.read.rescue``), and counted only where it reads surely.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from setvision.vision.find.candidates import EDGE_LEVELS, MIN_FILL, make_maps
from setvision.vision.geometry import contains_point, convex_iou, interior_angles, order_corners

#: The crop around a place: its bounding box grown by this share of its size (square root of
#: its area) on every side, so the card's whole edge and some table are inside.
CROP_GROWTH = 0.6
#: The crop is scaled so that the place's size is this many pixels: regions and edges are
#: measured at one scale whatever the photo's.
PLACE_PX = 120
#: A region is the card only if its area is within this range of the place's (a share).
AREA_RANGE = (0.4, 2.0)
#: ... if it overlaps the place by at least this (intersection over union) ...
MIN_PLACE_IOU = 0.5
#: ... and if no corner of its quad lies further than this from square (degrees): steeper than
#: the finder's makers allow (``MAX_ANGLE_ERROR``), since here the net has seen a card.
MAX_CORNER_ERROR = 60.0
#: A region's hull is simplified to corners within this share of its perimeter.
CORNER_TOLERANCE = 0.03
#: How far (crop pixels) a region parted by edges lies inside the card's edge: Canny's edge
#: line, dilated to close its gaps, is 3 pixels wide, and the card's edge its middle.
EDGE_WIDTH = 1.0


def _masks(image: np.ndarray) -> list[tuple[np.ndarray, float]]:
    """Binary masks of the crop whose regions may be the card, each with the pixels its regions
    lie inside the card's edge: paper above the crop's own Otsu level, that paper parted at
    faint edges, and whatever lies between strong edges (edges are drawn a pixel wide)."""
    maps = make_maps(image)
    _, paper = cv2.threshold(maps.score, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    kernel = np.ones((3, 3), np.uint8)
    strong, faint = (cv2.dilate(cv2.Canny(maps.light, *levels), kernel) for levels in EDGE_LEVELS)
    parted = cv2.bitwise_and(paper, cv2.bitwise_not(faint))
    return [(paper, 0.0), (parted, EDGE_WIDTH), (cv2.bitwise_not(strong), EDGE_WIDTH)]


def _grown(quad: np.ndarray, pixels: float) -> np.ndarray:
    """The quad (corners clockwise, y down) with every side moved out by ``pixels``: its
    corners where the moved sides meet."""
    if pixels <= 0:
        return quad
    sides = np.roll(quad, -1, axis=0) - quad
    normals = np.stack([sides[:, 1], -sides[:, 0]], axis=1)
    normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-9)
    starts = quad + pixels * normals  # side k runs from starts[k] along sides[k]
    corners = []
    for k in range(4):
        before = (k - 1) % 4
        matrix = np.stack([sides[before], -sides[k]], axis=1)
        if abs(np.linalg.det(matrix)) < 1e-9:
            return quad
        t = np.linalg.solve(matrix, starts[k] - starts[before])[0]
        corners.append(starts[before] + t * sides[before])
    return np.array(corners, np.float32)


def _quad(contour: np.ndarray) -> np.ndarray | None:
    """The region's four corners (its hull simplified), or None where the hull is no quad."""
    hull = cv2.convexHull(contour)
    corners = cv2.approxPolyDP(hull, CORNER_TOLERANCE * cv2.arcLength(hull, True), True)
    return order_corners(corners.reshape(4, 2).astype(np.float32)) if len(corners) == 4 else None


@dataclass(frozen=True)
class PlaceCrop:
    """The image around a place, and how it maps onto that crop scaled to ``PLACE_PX`` per
    place: regions and edges are measured at one scale whatever the photo's."""

    pixels: np.ndarray  # the crop, in the image's own pixels
    low: np.ndarray  # its top-left corner in the image (x, y)
    scale: float  # crop pixels per image pixel once scaled
    size: tuple[int, int]  # (width, height) once scaled
    area: float  # the place's area (image pixels)

    def scaled(self, pixels: np.ndarray) -> np.ndarray:
        """``pixels`` (this crop's, or a map of it) scaled to ``size``."""
        shrinking = self.scale < 1
        interpolation = cv2.INTER_AREA if shrinking else cv2.INTER_LINEAR
        return cv2.resize(pixels, self.size, interpolation=interpolation)


def place_crop(
    image: np.ndarray, place: np.ndarray, growth: float = 0.0, band_px: float = 0.0
) -> PlaceCrop | None:
    """The crop of ``image`` around ``place`` (a quad in its pixels), its bounding box grown on
    every side by ``growth`` of the place's size (square root of its area) and by ``band_px``
    pixels of the scaled crop; None for a place too small to look at."""
    place = np.asarray(place, np.float32).reshape(4, 2)
    area = float(cv2.contourArea(place))
    if area <= 1.0:
        return None
    size = np.sqrt(area)
    scale = PLACE_PX / size
    reach = growth * size + band_px / scale
    height, width = image.shape[:2]
    low = np.maximum(np.floor(place.min(axis=0) - reach), 0).astype(int)
    high = np.minimum(np.ceil(place.max(axis=0) + reach), [width, height]).astype(int)
    crop = image[low[1] : high[1], low[0] : high[0]]
    shape = (max(1, round(crop.shape[1] * scale)), max(1, round(crop.shape[0] * scale)))
    if min(crop.shape[:2]) < 2 or min(shape) < 8:
        return None
    return PlaceCrop(crop, low, scale, shape, area)


def local_outline(image: np.ndarray, place: np.ndarray) -> np.ndarray | None:
    """The outline (corners in ``image``'s pixels) of the card at ``place`` (a quad there), as
    the region around it follows it; None where none does."""
    place = np.asarray(place, np.float32).reshape(4, 2)
    around = place_crop(image, place, growth=CROP_GROWTH)
    if around is None:
        return None
    low, scale = around.low, around.scale
    crop = around.scaled(around.pixels)
    target = ((place - low) * scale).astype(np.float32)
    centre = tuple(target.mean(axis=0))
    target_area = around.area * scale * scale
    best, best_iou = None, MIN_PLACE_IOU
    for mask, inside in _masks(crop):
        contours, hierarchy = cv2.findContours(mask, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
        if hierarchy is None:
            continue
        for contour, links in zip(contours, hierarchy[0]):
            region = cv2.contourArea(contour)
            if links[3] >= 0 or not AREA_RANGE[0] <= region / target_area <= AREA_RANGE[1]:
                continue
            quad = _quad(contour)
            if quad is None or region < MIN_FILL * cv2.contourArea(quad):
                continue
            quad = _grown(quad, inside)
            corner_error = np.abs(interior_angles(quad) - 90.0).max()
            if corner_error > MAX_CORNER_ERROR or not contains_point(quad, centre):
                continue
            overlap = convex_iou(quad, target)
            if overlap >= best_iou:
                best, best_iou = quad, overlap
    return None if best is None else (best / np.float32(scale) + low).astype(np.float32)
