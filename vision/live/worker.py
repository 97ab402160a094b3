"""Run live analysis beside the frame reader, so that showing frames never waits for it.

The worker thread always takes the newest frame submitted: when analysis is slower than the
camera, frames in between are skipped rather than queued, and the display shows the newest
frame with the latest results. Video files read without a window are analysed frame by frame
instead (every frame, reproducibly).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

from setvision.vision.live.source import Frame, FrameSource
from setvision.vision.live.tracking import LiveLayout

Analyse = Callable[[Frame], LiveLayout]


class AnalysisWorker:
    """A thread analysing the newest submitted frame; ``latest()`` gives the newest result."""

    def __init__(self, analyse: Analyse):
        self._analyse = analyse
        self._condition = threading.Condition()
        self._pending: Frame | None = None
        self._latest: tuple[Frame, LiveLayout] | None = None
        self._error: BaseException | None = None
        self._busy = False
        self._stopping = False
        self.analysed = 0
        self.skipped = 0
        self._thread = threading.Thread(target=self._run, name="setvision-analysis", daemon=True)

    def __enter__(self) -> AnalysisWorker:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def busy(self) -> bool:
        """Whether a frame is being analysed right now."""
        with self._condition:
            return self._busy

    def submit(self, frame: Frame) -> None:
        """Hand over a frame; one still waiting is replaced (skipped)."""
        with self._condition:
            self._raise_error()
            if self._pending is not None:
                self.skipped += 1
            self._pending = frame
            self._condition.notify_all()

    def latest(self) -> tuple[Frame, LiveLayout] | None:
        """The newest result and the frame it was read from (None before the first)."""
        with self._condition:
            self._raise_error()
            return self._latest

    def drain(self, timeout: float | None = None) -> tuple[Frame, LiveLayout] | None:
        """Wait until every submitted frame has been analysed; the newest result."""
        with self._condition:
            self._condition.wait_for(
                lambda: self._error is not None or (self._pending is None and not self._busy),
                timeout,
            )
            self._raise_error()
            return self._latest

    def stop(self) -> None:
        with self._condition:
            self._stopping = True
            self._condition.notify_all()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        while True:
            with self._condition:
                self._condition.wait_for(lambda: self._stopping or self._pending is not None)
                if self._stopping:
                    return
                frame, self._pending, self._busy = self._pending, None, True
            try:
                result = self._analyse(frame)
            except BaseException as error:  # handed to the reading thread, raised there
                with self._condition:
                    self._error, self._busy = error, False
                    self._condition.notify_all()
                return
            with self._condition:
                self._latest, self._busy = (frame, result), False
                self.analysed += 1
                self._condition.notify_all()

    def _raise_error(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error


def analysed_frames(
    source: FrameSource, analyse: Analyse, max_frames: int | None = None, realtime: bool = False
) -> Iterator[tuple[Frame, LiveLayout]]:
    """Each analysed frame with its result, up to ``max_frames`` frames read.

    ``realtime`` (cameras, streams) analyses on a worker thread and skips frames when
    analysis falls behind; otherwise every frame is analysed in order.
    """
    if not realtime:
        for frame in source:
            if max_frames is not None and frame.index >= max_frames:
                return
            yield frame, analyse(frame)
        return
    shown = -1
    with AnalysisWorker(analyse) as worker:
        for frame in source:
            if max_frames is not None and frame.index >= max_frames:
                break
            worker.submit(frame)
            latest = worker.latest()
            if latest is not None and latest[0].index != shown:
                shown = latest[0].index
                yield latest
        latest = worker.drain()
        if latest is not None and latest[0].index != shown:
            yield latest
