"""Timing the reader: photos letterboxed into a camera's frame, and live analysis of videos.

In: photo files (or videos), the reader (or a way to make one), the frame size, runs per
photo and the number of OpenCV and numpy threads. Out: a ``Timing`` per photo and frame
(``vision.learn.bench``: ``summarise`` and ``format_summary`` make the table), or a
``LiveBench`` per video (``vision.live.bench``). Nothing is printed here: ``on_timing`` hears
of each photo's timings as they come.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence

import cv2
from setvision.vision.image import load
from setvision.vision.learn.bench import Timing, letterbox, time_reading
from setvision.vision.pipeline import CardReader


def bench_photos(
    paths: Sequence[str],
    reader: CardReader,
    size: tuple[int, int],
    repeat: int,
    threads: int = 1,
    full_size: bool = False,
    on_timing: Callable[[str, str, Timing], None] | None = None,
) -> list[Timing]:
    """Each photo letterboxed into ``size`` and read ``repeat`` times (median per stage);
    with ``full_size`` also at its own size (reported to ``on_timing``, not returned).

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
            frames = [(frame, letterbox(photo.image, size))]
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
