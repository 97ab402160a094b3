"""Changes of camera and light applied to copies of the training photos.

The labelled photos come from a few dozen cameras and lamps; the models must read cards under
any. Each training photo also gets one copy under a warmer or cooler light, dimmer and noisier,
more compressed or softer, so the classifiers learn which measurements such changes leave
alone. The change is chosen from the photo's name: retraining reproduces the same copies.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np


def _tint(image: np.ndarray, bgr: tuple[float, float, float]) -> np.ndarray:
    return np.clip(image * np.float32(bgr), 0, 255).astype(np.uint8)


def warm_light(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A tungsten lamp: blue weak, red strong."""
    return _tint(image, (rng.uniform(0.65, 0.8), rng.uniform(0.88, 0.97), rng.uniform(1.05, 1.15)))


def cool_light(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Daylight or a screen: blue strong, red weak."""
    return _tint(image, (rng.uniform(1.05, 1.15), rng.uniform(0.97, 1.03), rng.uniform(0.75, 0.88)))


def dim_light(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Under-exposed: darker, compressed mid-tones, and the sensor's noise."""
    dark = 255.0 * (image / 255.0) ** rng.uniform(1.3, 1.8) * rng.uniform(0.6, 0.85)
    return np.clip(dark + rng.normal(0, rng.uniform(2, 5), image.shape), 0, 255).astype(np.uint8)


def compressed(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Saved at a low JPEG quality (chat apps, webcams)."""
    quality = int(rng.integers(25, 55))
    encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])[1]
    return cv2.imdecode(encoded, cv2.IMREAD_COLOR)


def soft_focus(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Out of focus or shaken a little."""
    sigma = rng.uniform(0.8, 1.6) * max(1.0, max(image.shape[:2]) / 1000)
    return cv2.GaussianBlur(image, (0, 0), sigma)


AUGMENTATIONS: dict[str, Callable[[np.ndarray, np.random.Generator], np.ndarray]] = {
    "warm": warm_light,
    "cool": cool_light,
    "dim": dim_light,
    "jpeg": compressed,
    "soft": soft_focus,
}


def augment(image: np.ndarray, key: str) -> tuple[str, np.ndarray]:
    """One change of camera or light for the photo named ``key``, the same on every run."""
    seed = int(hashlib.sha1(key.encode()).hexdigest()[:12], 16)
    names = sorted(AUGMENTATIONS)
    name = names[seed % len(names)]
    return name, AUGMENTATIONS[name](image, np.random.default_rng(seed))


def cast_shadow(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A person's hard shadow: a dark band with a sharp edge across part of the picture."""
    height, width = image.shape[:2]
    angle = rng.uniform(0, np.pi)
    normal = np.array([np.cos(angle), np.sin(angle)])
    ys, xs = np.mgrid[0:height, 0:width]
    distance = (xs - width * rng.uniform(0.3, 0.7)) * normal[0]
    distance += (ys - height * rng.uniform(0.3, 0.7)) * normal[1]
    shade = np.where(distance > 0, rng.uniform(0.35, 0.6), 1.0).astype(np.float32)
    shade = cv2.GaussianBlur(shade, (0, 0), rng.uniform(1.0, 4.0))
    return np.clip(image * shade[..., None], 0, 255).astype(np.uint8)


@dataclass(frozen=True)
class FinderCopy:
    """A training photo's copy for the finder: the change made, the copied image, where points
    of the photo lie in it (a point may show more than once), and how much each of its
    candidates weighs in training (a copy showing the photo many times counts as one photo)."""

    name: str
    image: np.ndarray
    places: Callable[[np.ndarray], list[np.ndarray]]
    weight: float = 1.0


def _same_place(points: np.ndarray) -> list[np.ndarray]:
    return [points]


def far_away(image: np.ndarray, rng: np.random.Generator) -> FinderCopy:
    """The table seen from further away: the photo shrunk 2 or 3 times and tiled, each tile
    mirrored from its neighbours so the table runs on across the seams. Few photos show cards
    this small (a few hundredths of the picture's width); the finder must still take them."""
    tiles = int(rng.integers(2, 4))
    height, width = image.shape[:2]
    tile_w, tile_h = max(1, width // tiles), max(1, height // tiles)
    small = cv2.resize(image, (tile_w, tile_h), interpolation=cv2.INTER_AREA)
    rows = []
    for row in range(tiles):
        flipped = small[::-1] if row % 2 else small
        rows.append(np.hstack([flipped[:, ::-1] if col % 2 else flipped for col in range(tiles)]))
    scale = np.array([tile_w / width, tile_h / height])
    size = np.array([tile_w, tile_h])

    def places(points: np.ndarray) -> list[np.ndarray]:
        inside = (np.asarray(points, np.float64) + 0.5) * scale - 0.5  # pixel centres kept
        placed = []
        for row in range(tiles):
            for col in range(tiles):
                mirrored = np.where([col % 2, row % 2], size - 1 - inside, inside)
                placed.append(mirrored + size * [col, row])
        return placed

    return FinderCopy(f"far{tiles}", np.vstack(rows), places, 1.0 / tiles**2)


#: The finder also learns cards under a hard cast shadow (the attribute models' copies stay as
#: they are, so their training is unchanged), and cards seen from far away.
FINDER_AUGMENTATIONS = {**AUGMENTATIONS, "shadow": cast_shadow}
FINDER_GEOMETRY = {"far": far_away}


def augment_for_finder(image: np.ndarray, key: str) -> FinderCopy:
    """One change of camera or light, a cast shadow, or a step back, for the photo named
    ``key``; the same on every run."""
    seed = int(hashlib.sha1(("finder " + key).encode()).hexdigest()[:12], 16)
    names = sorted([*FINDER_AUGMENTATIONS, *FINDER_GEOMETRY])
    name = names[seed % len(names)]
    rng = np.random.default_rng(seed)
    if name in FINDER_GEOMETRY:
        return FINDER_GEOMETRY[name](image, rng)
    return FinderCopy(name, FINDER_AUGMENTATIONS[name](image, rng), _same_place)
