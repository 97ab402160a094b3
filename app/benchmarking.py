"""Timing the reader: photos letterboxed into a camera's frame, and live analysis of videos.

In: photo files (or videos), the reader (or a way to make one), the frame size, runs per
photo and the number of OpenCV and numpy threads. Out: a ``Timing`` per photo and frame
(``vision.learn.bench``: ``summarise`` and ``format_summary`` make the table), or a
``LiveBench`` per video (``vision.live.bench``). Nothing is printed here: ``on_timing`` hears
of each photo's timings as they come.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import cv2
import numpy as np
from setvision.vision.image import filled, letterbox, load
from setvision.vision.learn.bench import Timing, time_reading
from setvision.vision.pipeline import CardReader

#: The fixed work timed on every machine: this many steps of a Python loop, and a 1280x720
#: frame shrunk to the finder's 800-pixel work copy (OpenCV, ``INTER_AREA``).
PYTHON_STEPS = 1_000_000
REFERENCE_RUNS = 5


@dataclass(frozen=True)
class Machine:
    """What a speed figure was measured on, and how fast this machine runs fixed work (ms,
    median of ``REFERENCE_RUNS``): figures from two machines compare only through these."""

    processor: str
    cores: int
    versions: str  # Python, numpy, OpenCV and the SIMD code OpenCV dispatches
    python_ms: float
    opencv_ms: float

    def line(self) -> str:
        return (
            f"machine: {self.processor}, {self.cores} core(s); {self.versions}; reference: "
            f"{PYTHON_STEPS:,} Python steps {self.python_ms:.0f} ms, "
            f"1280x720 to 800x450 {self.opencv_ms:.1f} ms"
        )


def processor_name(cpuinfo: str) -> str | None:
    """The processor's model name in the text of Linux's ``/proc/cpuinfo`` (None if absent)."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "Hardware") and value.strip():
            return value.strip()
    return None


def _median_ms(work: Callable[[], object]) -> float:
    runs = []
    for _ in range(REFERENCE_RUNS):
        start = time.perf_counter()
        work()
        runs.append((time.perf_counter() - start) * 1000)
    return float(np.median(runs))


def _python_steps() -> int:
    total = 0
    for step in range(PYTHON_STEPS):
        total += step
    return total


def this_machine(threads: int = 1) -> Machine:
    """The processor, versions and reference timings of the machine running (on ``threads``
    OpenCV threads, as the photos are timed)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as file:
            name = processor_name(file.read())
    except OSError:
        name = None
    dispatched = [f.lstrip("*") for f in cv2.getCPUFeaturesLine().split() if f.startswith("*")]
    versions = (
        f"Python {platform.python_version()}, numpy {np.__version__}, OpenCV {cv2.__version__}"
        + (f" ({' '.join(dispatched)})" if dispatched else "")
    )
    frame = np.random.default_rng(0).integers(0, 256, (720, 1280, 3), dtype=np.uint8)
    cv2.setNumThreads(threads)
    opencv_ms = _median_ms(lambda: cv2.resize(frame, (800, 450), interpolation=cv2.INTER_AREA))
    return Machine(
        name or platform.processor() or platform.machine() or "unknown processor",
        os.cpu_count() or 1,
        versions,
        _median_ms(_python_steps),
        opencv_ms,
    )


def bench_photos(
    paths: Sequence[str],
    reader: CardReader,
    size: tuple[int, int],
    repeat: int,
    threads: int = 1,
    full_size: bool = False,
    on_timing: Callable[[str, str, Timing], None] | None = None,
    fill: bool = False,
) -> list[Timing]:
    """Each photo letterboxed into ``size`` (with ``fill``: scaled to cover it and cut to it)
    and read ``repeat`` times (median per stage); with ``full_size`` also at its own size
    (reported to ``on_timing``, not returned).

    ``on_timing(path, label, timing)`` gets each timing, labelled ``WxH`` or ``full``.
    """
    from threadpoolctl import threadpool_limits

    cv2.setNumThreads(threads)
    frame = f"{size[0]}x{size[1]}"
    timings = []
    with threadpool_limits(threads):
        for index, path in enumerate(paths):
            photo = load(path)
            name = os.path.basename(path)
            framed = (filled if fill else letterbox)(photo.image, size)
            frames = [(frame, framed)]
            if full_size:
                frames.append(("full", photo.image))
            for label, image in frames:
                # one untimed read first warms the models and caches, as a running app would be
                timing = time_reading(reader, image, name, repeat, warmup=index == 0)
                if label == frame:
                    timings.append(timing)
                if on_timing:
                    on_timing(path, label, timing)
    return timings


def bench_videos(
    paths: Sequence[str],
    make_reader: Callable[[], CardReader],
    max_frames: int | None = None,
    size: tuple[int, int] | None = None,
    threads: int = 1,
) -> Iterator[tuple[str, object]]:
    """Every frame of each video analysed in order by a fresh live analyser (fitted into
    ``size`` if given): ``(path, LiveBench)`` per video, as each is done."""
    from setvision.vision.live.bench import bench_video
    from setvision.vision.live.session import LiveAnalyser

    cv2.setNumThreads(threads)
    for path in paths:
        yield path, bench_video(path, LiveAnalyser(make_reader()), max_frames, size, threads)
