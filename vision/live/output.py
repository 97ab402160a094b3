"""Write what live shows: the annotated stream as a video, and single annotated frames."""

from __future__ import annotations

import json
import os

import cv2
import numpy as np
from setvision.vision.errors import SetvisionError

_FOURCC = {".mp4": "mp4v", ".m4v": "mp4v", ".mov": "mp4v", ".avi": "MJPG", ".mkv": "mp4v"}


class VideoSink:
    """An annotated video file, opened at the first frame (whose size it takes)."""

    def __init__(self, path: str, fps: float):
        suffix = os.path.splitext(path)[1].lower()
        if suffix not in _FOURCC:
            raise SetvisionError(
                f"{path}: cannot write this kind of video; use one of {', '.join(_FOURCC)}"
            )
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise SetvisionError(f"{path}: the folder {folder} does not exist")
        self.path = path
        self.fps = fps
        self.frames = 0
        self._fourcc = cv2.VideoWriter_fourcc(*_FOURCC[suffix])
        self._writer: cv2.VideoWriter | None = None
        self._size: tuple[int, int] | None = None

    def write(self, image: np.ndarray) -> None:
        size = (image.shape[1], image.shape[0])
        if self._writer is None:
            self._writer = cv2.VideoWriter(self.path, self._fourcc, self.fps, size)
            if not self._writer.isOpened():
                raise SetvisionError(f"{self.path}: cannot write a video here")
            self._size = size
        if size != self._size:
            image = cv2.resize(image, self._size)
        self._writer.write(image)
        self.frames += 1

    def close(self) -> None:
        if self._writer is not None:
            self._writer.release()

    def __enter__(self) -> VideoSink:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def save_snapshot(folder: str, stem: str, image: np.ndarray, record: dict) -> tuple[str, str]:
    """Write ``stem``.png and ``stem``.json into ``folder``; return both paths."""
    os.makedirs(folder, exist_ok=True)
    picture = os.path.join(folder, f"{stem}.png")
    data = os.path.join(folder, f"{stem}.json")
    if not cv2.imwrite(picture, image):
        raise SetvisionError(f"{picture}: cannot write the annotated frame")
    try:
        with open(data, "w") as handle:
            json.dump(record, handle, indent=1)
            handle.write("\n")
    except OSError as error:
        raise SetvisionError(f"{data}: cannot write ({error.strerror})") from None
    return picture, data
