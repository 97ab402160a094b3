"""Frames from a camera, a video file or a stream, with one-line errors when they fail.

A camera (or a live stream) that stops delivering frames is retried for a few seconds
before giving up: USB cameras and phone streams drop out briefly. A video file's frames that
cannot be decoded (a damaged file) are skipped and counted in ``problems``, as is a file that
ends before the frame count it states.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import cv2
import numpy as np
from setvision.vision.errors import CameraError
from setvision.vision.report.files import require_utf8

logger = logging.getLogger(__name__)

# FFmpeg's and the depth-camera backend's own messages would reach the user's terminal; the
# failures they describe are reported here as one line instead. Read at the first capture.
os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")
os.environ.setdefault("OPENCV_VIDEOIO_PRIORITY_OBSENSOR", "0")

VIDEO_SUFFIXES = (".mp4", ".m4v", ".mov", ".avi", ".mkv", ".webm")
#: How long a camera or live stream may deliver nothing before the source gives up.
RETRY_SECONDS = 3.0
#: Camera numbers above this are refused: OpenCV reads larger ones as a backend code plus a
#: camera number, and a negative number or one past 32 bits crashes it.
MAX_CAMERA = 9999
#: A file whose next this-many frames all fail to decode has ended (or is too damaged to go on).
MAX_DAMAGED_RUN = 30
#: A file may end this many frames short of its stated count (containers round it) unnoticed.
FRAME_COUNT_SLACK = 2
_RETRY_PAUSE = 0.05


@dataclass(frozen=True)
class Frame:
    """One frame: ``index`` counts frames read from 0, ``t`` is seconds since the start.

    ``t`` is the video's own clock for a file and the wall clock for a camera or stream;
    ``image`` is (H, W, 3) uint8 BGR.
    """

    index: int
    t: float
    image: np.ndarray


class FrameSource:
    """Reads frames from an opened ``cv2.VideoCapture`` (or anything with its read/get/release).

    ``live`` sources (cameras, streams) are retried for ``retry_seconds`` when a read fails;
    a file ends at its first failed read. ``clock`` and ``sleep`` are injectable for tests.
    """

    def __init__(
        self,
        capture,
        name: str,
        live: bool,
        retry_seconds: float = RETRY_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.capture = capture
        self.name = name
        self.live = live
        self.retry_seconds = retry_seconds
        self.clock = clock
        self.sleep = sleep
        fps = float(capture.get(cv2.CAP_PROP_FPS) or 0.0)
        self.fps = fps if 1.0 <= fps <= 240.0 else 30.0
        frames = int(capture.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
        self.frame_count = frames if frames > 0 and not live else None
        self._index = 0
        self._start: float | None = None
        self._damaged: list[int] = []
        self._ended = False

    def read(self) -> Frame | None:
        """The next frame, or None at the end of a file; ``CameraError`` when a live source dies."""
        ok, image = self.capture.read()
        if not ok or image is None:
            if not self.live and self._index == 0:
                raise CameraError(
                    f"{self.name}: no frame can be decoded (an incomplete or unsupported video?)"
                )
            if not self.live:
                image = self._skip_damaged()
                if image is None:
                    return None
            else:
                image = self._retry()
        now = self.clock()
        if self._start is None:
            self._start = now
        t = self._index / self.fps if not self.live else now - self._start
        frame = Frame(self._index, t, self._colour(image))
        self._index += 1
        return frame

    def _skip_damaged(self) -> np.ndarray | None:
        """The next decodable frame of a file after one that failed, or None at its end; frames
        that fail before the stated count is reached are counted as damaged."""
        if self.frame_count is None or self._index >= self.frame_count - FRAME_COUNT_SLACK:
            self._ended = True
            return None
        first = self._index
        for _ in range(MAX_DAMAGED_RUN):
            self._index += 1  # the lost frame keeps its place on the video's clock
            ok, image = self.capture.read()
            if ok and image is not None:
                self._damaged.extend(range(first, self._index))
                return image
        self._index, self._ended = first, True  # nothing more to decode: the file ends here
        return None

    @property
    def problems(self) -> list[str]:
        """What went wrong reading a file so far, worded for the user (empty when nothing did)."""
        found = []
        if self._damaged:
            first = self._damaged[0]
            found.append(
                f"{self.name}: {len(self._damaged)} frame{'s' if len(self._damaged) > 1 else ''}"
                f" could not be decoded (from frame {first}): a damaged file"
            )
        short = self.frame_count is not None and self._ended
        if short and self._index < self.frame_count - FRAME_COUNT_SLACK:
            found.append(
                f"{self.name}: ended at frame {self._index} of the {self.frame_count} it states: "
                "the rest cannot be decoded"
            )
        return found

    def _retry(self) -> np.ndarray:
        deadline = self.clock() + self.retry_seconds
        logger.debug("%s: no frame, retrying for %.1f s", self.name, self.retry_seconds)
        while self.clock() < deadline:
            self.sleep(_RETRY_PAUSE)
            ok, image = self.capture.read()
            if ok and image is not None:
                return image
        raise CameraError(
            f"{self.name} stopped delivering frames (nothing for {self.retry_seconds:.0f} s): "
            "check that it is still connected and not taken by another program"
        )

    def _colour(self, image: np.ndarray) -> np.ndarray:
        if image.ndim == 2:
            return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
        return image[:, :, :3] if image.shape[2] == 4 else image

    def __iter__(self) -> Iterator[Frame]:
        while (frame := self.read()) is not None:
            yield frame

    def close(self) -> None:
        self.capture.release()

    def __enter__(self) -> FrameSource:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _is_url(text: str) -> bool:
    return "://" in text


def check_camera(index: int) -> int:
    """``index`` if it is a camera number OpenCV can be given safely, else a ``CameraError``."""
    if not 0 <= index <= MAX_CAMERA:
        raise CameraError(f"--camera must be 0..{MAX_CAMERA} (0 is the first camera), got {index}")
    return index


def open_camera(index: int) -> FrameSource:
    """Camera number ``index`` (0 is the first camera)."""
    capture = cv2.VideoCapture(check_camera(index))
    if not capture.isOpened():
        capture.release()
        raise CameraError(
            f"camera {index} cannot be opened: is it connected and not used by another "
            "program? (try another --camera number, or --video FILE)"
        )
    return FrameSource(capture, f"camera {index}", live=True)


def open_video(path: str) -> FrameSource:
    """A video file, or a stream address such as ``rtsp://...`` or ``http://.../video``."""
    require_utf8(path, "video")
    if not _is_url(path):
        if not os.path.exists(path):
            raise CameraError(f"{path}: no such file")
        if os.path.isdir(path):
            raise CameraError(f"{path}: is a folder, not a video")
    capture = cv2.VideoCapture(path)
    if not capture.isOpened():
        capture.release()
        if _is_url(path):
            raise CameraError(f"{path}: cannot open the stream (is the address right, is it on?)")
        raise CameraError(f"{path}: cannot be opened as a video (e.g. .mp4, .avi, .mov)")
    count = int(capture.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
    return FrameSource(capture, path, live=_is_url(path) and count <= 0)


def open_source(camera: int | None = None, video: str | None = None) -> FrameSource:
    """The source a command names: a video or stream if given, else a camera (default 0)."""
    if video is not None:
        return open_video(video)
    return open_camera(0 if camera is None else camera)
