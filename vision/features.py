"""From an upright card image to the numbers that describe its symbols.

Everything is measured against the card's own paper: a smooth model of the paper colour is
fitted across the card (absorbing shadows, glare gradients and the colour of the light) and
the image is divided by it. On that normalised card, ink is what absorbs light; symbols are
the filled outer contours of the ink; colour is the ink's absorption in each channel; fill is
how strongly the inside of a symbol absorbs compared with its outline; shape comes from the
contour (solidity, extent, corners, the width and centre line along the symbol).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

#: Fraction of the card's height and width left out at the edges (background, rounded corners).
MARGIN = 0.06
_PROFILE_BINS = 9

NUMBER_FEATURES = (
    "count_1", "count_2", "count_3", "count_many", "total_width", "largest_width",
    "size_spread", "ink_columns",
)  # fmt: skip
SHAPE_FEATURES = (
    "solidity", "extent", "aspect", "defect_depth", "vertices", "compactness",
    "hu1", "hu2", "hu3", "centre_wander", "centre_swing", "end_taper",
    *(f"width_{i}" for i in range(_PROFILE_BINS)),
)  # fmt: skip
COLOR_FEATURES = (
    "absorb_b", "absorb_g", "absorb_r", "share_b", "share_g", "share_r",
    "ink_l", "ink_a", "ink_b", "hue_cos", "hue_sin", "ink_chroma",
)  # fmt: skip
SHADING_FEATURES = (
    "inside_ratio", "inside_spread", "inside_cover", "inside_texture", "inside_chroma",
    "outline_strength", "inside_lightness",
)  # fmt: skip
FEATURE_NAMES = NUMBER_FEATURES + SHAPE_FEATURES + COLOR_FEATURES + SHADING_FEATURES
FEATURE_GROUPS = {
    "number": NUMBER_FEATURES,
    "shape": SHAPE_FEATURES,
    "color": COLOR_FEATURES,
    "shading": SHADING_FEATURES,
}


@dataclass
class CardFeatures:
    """Named measurements of one card and the symbol contours they come from."""

    values: dict[str, float]
    symbols: list[np.ndarray] = field(default_factory=list)

    def vector(self, names: tuple[str, ...] = FEATURE_NAMES) -> np.ndarray:
        return np.array([self.values[name] for name in names], dtype=np.float64)

    @property
    def symbol_count(self) -> int:
        return len(self.symbols)


def paper_model(card: np.ndarray) -> np.ndarray:
    """A smooth (quadratic) estimate of the bare paper's colour at every pixel, float32."""
    height, width = card.shape[:2]
    small = cv2.resize(card, (32, 20), interpolation=cv2.INTER_AREA).astype(np.float32)
    ys, xs = np.mgrid[0:20, 0:32].astype(np.float32)
    xs, ys = xs / 31.0 - 0.5, ys / 19.0 - 0.5
    design = np.stack([np.ones_like(xs), xs, ys, xs * xs, ys * ys, xs * ys], -1).reshape(-1, 6)
    inner = np.zeros((20, 32), bool)
    inner[2:-2, 2:-2] = True
    inner = inner.ravel()
    pixels = small.reshape(-1, 3)
    brightness = pixels.sum(axis=1)
    spread = pixels.max(axis=1) - pixels.min(axis=1)
    paper = inner & (brightness >= np.percentile(brightness[inner], 55))
    paper &= spread <= np.percentile(spread[paper], 90) + 1e-3
    coef = np.zeros((6, 3), np.float32)
    for _ in range(3):
        if paper.sum() < 12:
            break
        coef, *_ = np.linalg.lstsq(design[paper], pixels[paper], rcond=None)
        fitted = design @ coef
        residual = np.abs(pixels - fitted).max(axis=1) / np.maximum(fitted.mean(axis=1), 1.0)
        paper = inner & (residual < 0.08)
    gy, gx = np.mgrid[0:height, 0:width].astype(np.float32)
    gx, gy = gx / (width - 1) - 0.5, gy / (height - 1) - 0.5
    full = np.stack([np.ones_like(gx), gx, gy, gx * gx, gy * gy, gx * gy], -1)
    return np.maximum(full @ coef, 8.0).astype(np.float32)


def _inner_mask(height: int, width: int) -> np.ndarray:
    mask = np.zeros((height, width), bool)
    my, mx = round(MARGIN * height), round(MARGIN * width)
    mask[my : height - my, mx : width - mx] = True
    return mask


def _symbol_contours(ink: np.ndarray, strength: np.ndarray) -> list[np.ndarray]:
    """Outer contours of symbol-sized ink regions, left to right."""
    height, width = ink.shape
    closed = cv2.morphologyEx(ink.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(closed, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    found = []
    for contour in contours:
        x, y, w, h = cv2.boundingRect(contour)
        area = cv2.contourArea(contour)
        if area < 0.008 * height * width or h < 0.3 * height or h > 0.95 * height:
            continue
        if w > 0.9 * width:
            continue
        found.append(contour)
    if not found:
        return []
    areas = np.array([cv2.contourArea(c) for c in found])
    found = [c for c, a in zip(found, areas) if a >= 0.35 * areas.max()]
    return sorted(found, key=lambda c: cv2.boundingRect(c)[0])


def _width_profile(mask: np.ndarray) -> tuple[np.ndarray, float, float, float]:
    """Widths along the symbol's long (vertical) axis, and how its centre line wanders."""
    rows = np.nonzero(mask.any(axis=1))[0]
    if len(rows) < 4:
        return np.zeros(_PROFILE_BINS), 0.0, 0.0, 0.0
    mask = mask[rows[0] : rows[-1] + 1]
    widths = mask.sum(axis=1).astype(np.float64)
    columns = np.arange(mask.shape[1], dtype=np.float64)
    centres = (mask * columns).sum(axis=1) / np.maximum(widths, 1)
    max_width = max(widths.max(), 1.0)
    samples = np.linspace(0, len(widths) - 1, _PROFILE_BINS).round().astype(int)
    profile = widths[samples] / max_width
    profile = (profile + profile[::-1]) / 2  # a symbol turned upside down reads the same
    middle = centres[len(centres) // 8 : len(centres) - len(centres) // 8]
    wander = float(np.std(middle) / max_width) if len(middle) else 0.0
    thirds = np.array_split(middle, 3) if len(middle) >= 3 else [middle] * 3
    swing = float(abs(np.mean(thirds[0]) - np.mean(thirds[2])) / max_width)
    ends = np.concatenate([widths[: max(1, len(widths) // 6)], widths[-max(1, len(widths) // 6) :]])
    taper = float(ends.mean() / max_width)
    return profile, wander, swing, taper


def _shape_values(contours: list[np.ndarray], shape: tuple[int, int]) -> dict[str, float]:
    rows = []
    for contour in contours:
        area = max(cv2.contourArea(contour), 1.0)
        hull = cv2.convexHull(contour)
        (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
        perimeter = cv2.arcLength(contour, True)
        depth = 0.0
        hull_idx = cv2.convexHull(contour, returnPoints=False)
        if hull_idx is not None and len(hull_idx) > 3:
            try:
                defects = cv2.convexityDefects(contour, hull_idx)
            except cv2.error:
                defects = None
            if defects is not None:
                depth = float(defects.reshape(-1, 4)[:, 3].max()) / 256.0
        short = max(min(rw, rh), 1.0)
        hu = cv2.HuMoments(cv2.moments(contour)).ravel()
        hu = -np.sign(hu) * np.log10(np.abs(hu) + 1e-30)
        x, y, w, h = cv2.boundingRect(contour)
        mask = np.zeros((h, w), np.uint8)
        cv2.drawContours(mask, [contour - np.array([x, y])], -1, 1, thickness=-1)
        profile, wander, swing, taper = _width_profile(mask.astype(bool))
        approx = cv2.approxPolyDP(hull, 0.04 * cv2.arcLength(hull, True), True)
        rows.append(
            {
                "solidity": area / max(cv2.contourArea(hull), 1.0),
                "extent": area / max(rw * rh, 1.0),
                "aspect": max(rw, rh) / short,
                "defect_depth": depth / short,
                "vertices": float(len(approx)),
                "compactness": perimeter * perimeter / area / (4 * np.pi),
                "hu1": hu[0], "hu2": hu[1], "hu3": hu[2],
                "centre_wander": wander, "centre_swing": swing, "end_taper": taper,
                **{f"width_{i}": float(v) for i, v in enumerate(profile)},
            }
        )  # fmt: skip
    if not rows:
        return {name: 0.0 for name in SHAPE_FEATURES}
    return {name: float(np.median([row[name] for row in rows])) for name in SHAPE_FEATURES}


def extract(card: np.ndarray) -> CardFeatures:
    """Measure a canonical card image ((H, W, 3) uint8 BGR, landscape)."""
    height, width = card.shape[:2]
    normalised = card.astype(np.float32) / paper_model(card)
    normalised = np.clip(normalised, 0.0, 1.5)
    strength = 1.0 - normalised.min(axis=2)
    inner = _inner_mask(height, width)
    strength = np.where(inner, strength, 0.0).astype(np.float32)
    peak = float(np.percentile(strength[inner], 99.5))
    noise = float(np.median(np.abs(strength[inner] - np.median(strength[inner]))))
    threshold = float(np.clip(0.45 * peak, max(0.06, 5 * noise + 0.02), 0.35))
    ink = strength > threshold
    contours = _symbol_contours(ink, strength)
    symbols = np.zeros((height, width), np.uint8)
    cv2.drawContours(symbols, contours, -1, 1, thickness=-1)
    symbols = symbols.astype(bool)
    values: dict[str, float] = {}

    count = len(contours)
    widths = [cv2.boundingRect(c)[2] for c in contours] or [0]
    areas = [cv2.contourArea(c) for c in contours] or [0.0]
    values.update(
        count_1=float(count == 1), count_2=float(count == 2), count_3=float(count == 3),
        count_many=float(count > 3), total_width=sum(widths) / width,
        largest_width=max(widths) / width,
        size_spread=float(np.std(areas) / max(np.mean(areas), 1.0)),
        ink_columns=float(ink.any(axis=0).mean()),
    )  # fmt: skip
    values.update(_shape_values(contours, (height, width)))

    region = symbols if symbols.any() else (ink & inner)
    region_strength = strength[region] if region.any() else np.zeros(1, np.float32)
    outline_strength = float(np.percentile(region_strength, 95)) if region.any() else 0.0
    strong = region & (strength >= 0.6 * max(outline_strength, 1e-3))
    if not strong.any():
        strong = inner
    ink_colour = normalised[strong].mean(axis=0)  # B, G, R relative to paper
    absorb = np.clip(1.0 - ink_colour, 0.0, 1.0)
    share = absorb / max(absorb.sum(), 1e-3)
    balanced = np.clip(ink_colour * 255.0, 0, 255).astype(np.uint8).reshape(1, 1, 3)
    lab = cv2.cvtColor(balanced, cv2.COLOR_BGR2LAB).astype(np.float32).ravel()
    a_star, b_star = lab[1] - 128.0, lab[2] - 128.0
    chroma = float(np.hypot(a_star, b_star))
    values.update(
        absorb_b=absorb[0], absorb_g=absorb[1], absorb_r=absorb[2],
        share_b=share[0], share_g=share[1], share_r=share[2],
        ink_l=lab[0] / 255.0, ink_a=a_star / 128.0, ink_b=b_star / 128.0,
        hue_cos=a_star / max(chroma, 1e-3), hue_sin=b_star / max(chroma, 1e-3),
        ink_chroma=chroma / 128.0,
    )  # fmt: skip

    if symbols.any():
        short_side = np.median([max(1.0, min(cv2.minAreaRect(c)[1])) for c in contours])
        erosion = max(2, int(round(0.18 * short_side)))
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * erosion + 1, 2 * erosion + 1))
        inside = cv2.erode(symbols.astype(np.uint8), kernel).astype(bool)
    else:
        inside = np.zeros_like(symbols)
    if inside.sum() >= 10 and outline_strength > 1e-3:
        inner_strength = strength[inside]
        blurred = cv2.GaussianBlur(strength, (5, 5), 0)
        texture = np.abs(strength - blurred)[inside].mean()
        paper_chroma = normalised[inner & ~symbols]
        inside_colour = normalised[inside]
        chroma_inside = float(
            (inside_colour.max(axis=1) - inside_colour.min(axis=1)).mean()
            - (paper_chroma.max(axis=1) - paper_chroma.min(axis=1)).mean()
            if len(paper_chroma)
            else 0.0
        )
        values.update(
            inside_ratio=float(inner_strength.mean() / outline_strength),
            inside_spread=float(inner_strength.std() / outline_strength),
            inside_cover=float((inner_strength > 0.5 * outline_strength).mean()),
            inside_texture=float(texture / outline_strength),
            inside_chroma=chroma_inside,
            outline_strength=outline_strength,
            inside_lightness=float(normalised[inside].mean()),
        )
    else:
        values.update({name: 0.0 for name in SHADING_FEATURES})
        values["outline_strength"] = outline_strength
    return CardFeatures({k: float(v) for k, v in values.items()}, contours)
