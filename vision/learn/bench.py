"""Time the photo pipeline stage by stage: per photo, then over a folder of photos."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from setvision.solver.errors import SetvisionError
from setvision.vision.pipeline import CardReader

STAGES = ("find", "measure", "classify", "total")
FRAME_SIDES = (16, 8192)  # smallest and largest frame side bench accepts, in pixels


def parse_frame_size(text: str, option: str = "--frame-size") -> tuple[int, int]:
    """``"1280x720"`` -> (1280, 720); a ``SetvisionError`` naming ``option`` unless both
    sides are sane."""
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise SetvisionError(f"{option} takes WxH, e.g. 1280x720, got {text!r}") from None
    low, high = FRAME_SIDES
    if not (low <= width <= high and low <= height <= high):
        raise SetvisionError(f"{option} sides must be {low}..{high} pixels, got {width}x{height}")
    return width, height


@dataclass(frozen=True)
class Timing:
    """One frame read ``runs`` times: per-stage medians over the runs, in milliseconds."""

    label: str
    width: int
    height: int
    cards: int
    stages_ms: dict[str, float]  # medians over the runs; "total" is the whole read
    runs: int = 1


def time_reading(
    reader: CardReader, image: np.ndarray, label: str, repeat: int = 15, warmup: bool = True
) -> Timing:
    """Read ``image`` ``repeat`` times (after one untimed run if ``warmup``); medians per stage."""
    if repeat < 1:
        raise ValueError("repeat must be at least 1")
    if warmup:
        reader.read(image)
    runs: dict[str, list[float]] = {}
    for _ in range(repeat):
        start = time.perf_counter()
        layout = reader.read(image)
        wall = (time.perf_counter() - start) * 1000
        for stage, ms in layout.timings_ms.items():
            runs.setdefault(stage, []).append(ms)
        runs.setdefault("wall", []).append(wall)
    medians = {stage: float(np.median(values)) for stage, values in runs.items()}
    return Timing(label, image.shape[1], image.shape[0], len(layout.cards), medians, repeat)


@dataclass(frozen=True)
class StageSummary:
    """One stage over many photos: milliseconds at the median, 95th percentile and worst."""

    stage: str
    median: float
    p95: float
    max: float
    slowest: str  # label of the photo that took ``max``


@dataclass(frozen=True)
class BenchSummary:
    """Per-stage figures over photos (one figure per photo), with the photo and card counts."""

    photos: int
    cards_median: float
    stages: tuple[StageSummary, ...]

    def stage(self, name: str) -> StageSummary:
        return next(s for s in self.stages if s.stage == name)


def summarise(timings: Sequence[Timing], stages: Sequence[str] = STAGES) -> BenchSummary:
    """Median, 95th percentile (linear interpolation, as ``np.percentile``) and maximum over
    photos of each stage's per-photo figure; a stage a photo lacks counts as 0 ms."""
    if not timings:
        raise ValueError("no timings to summarise")
    rows = []
    for stage in stages:
        values = np.array([t.stages_ms.get(stage, 0.0) for t in timings], dtype=np.float64)
        worst = int(np.argmax(values))
        rows.append(
            StageSummary(
                stage,
                float(np.median(values)),
                float(np.percentile(values, 95)),
                float(values[worst]),
                timings[worst].label,
            )
        )
    cards = float(np.median([t.cards for t in timings]))
    return BenchSummary(len(timings), cards, tuple(rows))


def format_summary(summary: BenchSummary) -> list[str]:
    """The summary as lines of a fixed-width table (milliseconds), then the counts."""
    lines = [f"{'stage':<10} {'median':>8} {'p95':>8} {'max':>8}  slowest photo"]
    for s in summary.stages:
        lines.append(f"{s.stage:<10} {s.median:>8.1f} {s.p95:>8.1f} {s.max:>8.1f}  {s.slowest}")
    lines.append(f"photos {summary.photos}, cards per frame {summary.cards_median:g} (median)")
    return lines
