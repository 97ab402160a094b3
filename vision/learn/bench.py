"""Time the photo pipeline: median milliseconds per frame, stage by stage."""

from __future__ import annotations

import time
from dataclasses import dataclass

import cv2
import numpy as np
from setvision.vision.pipeline import CardReader


def letterbox(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The whole image scaled to fit ``size`` (width, height), centred on a black frame."""
    width, height = size
    factor = min(width / image.shape[1], height / image.shape[0])
    new_size = (round(image.shape[1] * factor), round(image.shape[0] * factor))
    interpolation = cv2.INTER_AREA if factor < 1 else cv2.INTER_LINEAR
    scaled = cv2.resize(image, new_size, interpolation=interpolation)
    frame = np.zeros((height, width, 3), np.uint8)
    y0, x0 = (height - scaled.shape[0]) // 2, (width - scaled.shape[1]) // 2
    frame[y0 : y0 + scaled.shape[0], x0 : x0 + scaled.shape[1]] = scaled
    return frame


@dataclass(frozen=True)
class Timing:
    label: str
    width: int
    height: int
    cards: int
    stages_ms: dict[str, float]  # medians over the runs; "total" is the whole read


def time_reading(reader: CardReader, image: np.ndarray, label: str, repeat: int = 15) -> Timing:
    """Read ``image`` ``repeat`` times after one warm-up run; medians per stage."""
    layout = reader.read(image)
    runs: dict[str, list[float]] = {}
    for _ in range(repeat):
        start = time.perf_counter()
        layout = reader.read(image)
        wall = (time.perf_counter() - start) * 1000
        for stage, ms in layout.timings_ms.items():
            runs.setdefault(stage, []).append(ms)
        runs.setdefault("wall", []).append(wall)
    medians = {stage: float(np.median(values)) for stage, values in runs.items()}
    return Timing(label, image.shape[1], image.shape[0], len(layout.cards), medians)
