"""Measure live analysis on a video: speed, latency, and flicker on a still table.

Flicker is how often the set list shown changed between consecutive analysed frames while
the table did not: the same tracked cards were in view, none of them awaiting a re-read.
Sets are compared as groups of tracked cards, so renumbering alone is not flicker.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable
from dataclasses import dataclass

import cv2
import numpy as np
from setvision.vision.image import letterbox
from setvision.vision.live.session import LiveAnalyser
from setvision.vision.live.source import Frame, open_video
from setvision.vision.live.tracking import LiveLayout
from threadpoolctl import threadpool_limits


@dataclass(frozen=True)
class LiveBench:
    """Figures for one video; times in milliseconds, rates per 10 seconds of video."""

    source: str
    frames: int
    size: tuple[int, int]
    video_seconds: float
    analysis_seconds: float
    latencies_ms: tuple[float, ...]
    cpu_ms: tuple[float, ...]
    still_seconds: float
    set_changes: int
    card_changes: int
    renumberings: int
    tracks_started: int
    mean_cards: float

    @property
    def fps(self) -> float:
        """Analysed frames per second of wall time (what a shared machine gives)."""
        return self.frames / self.analysis_seconds if self.analysis_seconds > 0 else 0.0

    @property
    def cpu_fps(self) -> float:
        """Analysed frames per second of CPU time: one core given to nothing else."""
        total = sum(self.cpu_ms) / 1000
        return self.frames / total if total > 0 else 0.0

    def latency(self, percentile: float) -> float:
        """Wall-clock milliseconds per frame at this percentile."""
        return float(np.percentile(self.latencies_ms, percentile)) if self.latencies_ms else 0.0

    def cpu_latency(self, percentile: float) -> float:
        """CPU milliseconds per frame at this percentile (what one free core would take)."""
        return float(np.percentile(self.cpu_ms, percentile)) if self.cpu_ms else 0.0

    @property
    def flicker_per_10s(self) -> float:
        return 10 * self.set_changes / self.still_seconds if self.still_seconds > 0 else 0.0


def _set_groups(result: LiveLayout) -> frozenset:
    ids = result.track_ids
    return frozenset(frozenset(ids[i - 1] for i in found) for found in result.layout.sets)


def _cards(result: LiveLayout) -> dict[int, object]:
    return {i: card.card for i, card in zip(result.track_ids, result.layout.cards)}


def bench_live(source: str, frames: Iterable[Frame], analyser: LiveAnalyser) -> LiveBench:
    """Analyse every frame in turn (no frame dropped) and gather the figures."""
    latencies, cpu, previous = [], [], None
    still = 0.0
    set_changes = card_changes = renumberings = 0
    cards_seen, last_t, size = 0, 0.0, (0, 0)
    for frame in frames:
        start, start_cpu = time.perf_counter(), time.process_time()
        result = analyser.analyse(frame)
        latencies.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
        size, last_t = (frame.image.shape[1], frame.image.shape[0]), frame.t
        cards_seen += len(result.layout.cards)
        if previous is not None:
            same_table = (
                set(previous.track_ids) == set(result.track_ids)
                and not previous.unsettled
                and not result.unsettled
            )
            if same_table:
                still += result.t - previous.t
                set_changes += _set_groups(previous) != _set_groups(result)
                card_changes += _cards(previous) != _cards(result)
                renumberings += previous.track_ids != result.track_ids
        previous = result
    n = len(latencies)
    return LiveBench(
        source=source,
        frames=n,
        size=size,
        video_seconds=last_t,
        analysis_seconds=sum(latencies) / 1000,
        latencies_ms=tuple(latencies),
        cpu_ms=tuple(cpu),
        still_seconds=still,
        set_changes=set_changes,
        card_changes=card_changes,
        renumberings=renumberings,
        tracks_started=analyser.tracker.started,
        mean_cards=cards_seen / n if n else 0.0,
    )


def bench_video(
    path: str,
    analyser: LiveAnalyser,
    max_frames: int | None = None,
    size: tuple[int, int] | None = None,
    threads: int = 1,
) -> LiveBench:
    """``bench_live`` on a video file, optionally fitting each frame into ``size`` first.

    OpenCV and the BLAS under numpy are limited to ``threads`` threads meanwhile, so that
    the CPU time measured is what that many cores would do.
    """
    before = cv2.getNumThreads()
    cv2.setNumThreads(threads)
    try:
        with threadpool_limits(threads), open_video(path) as source:
            frames = itertools.islice(source, max_frames)
            if size is not None:
                frames = (Frame(f.index, f.t, letterbox(f.image, size)) for f in frames)
            return bench_live(path, frames, analyser)
    finally:
        cv2.setNumThreads(before)
