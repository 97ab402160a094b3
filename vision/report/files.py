"""Output files written safely: images through Python's file I/O, names that never collide.

OpenCV's ``imwrite``, ``VideoCapture`` and ``VideoWriter`` take a path as UTF-8 text and crash
on a file name that is not valid UTF-8 (possible on Linux), so images are encoded in memory
and written here, and paths handed to OpenCV are checked first. An annotated image never
replaces an input, another output of the same run, or a file setvision did not write.
"""

from __future__ import annotations

import codecs
import contextlib
import itertools
import os
import struct
import tempfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from setvision.solver.errors import SetvisionError

if TYPE_CHECKING:
    import numpy as np

#: A codec error handler for names and messages: bytes of a file name that are not UTF-8
#: are shown as ``\xNN`` (as the shell writes them), any other unencodable character escaped.
SHOWN = "setvision-shown"
#: JPEG comment written into annotated images: marks a file this program may replace.
MARK = b"setvision annotated image"
_COMMENT = b"\xff\xfe" + struct.pack(">H", len(MARK) + 2) + MARK
#: The same mark as a PNG text chunk, right after the header chunk (a PNG's first 33 bytes).
_PNG_TEXT = b"Comment\x00" + MARK
_PNG_CHUNK = (
    struct.pack(">I", len(_PNG_TEXT))
    + b"tEXt"
    + _PNG_TEXT
    + struct.pack(">I", zlib.crc32(b"tEXt" + _PNG_TEXT))
)
_PNG_HEADER = 33
WRITABLE_SUFFIXES = (".jpg", ".jpeg", ".png")


def _show_unencodable(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start : error.end]
    return "".join(
        f"\\x{ord(c) - 0xDC00:02x}"
        if 0xDC80 <= ord(c) <= 0xDCFF
        else c.encode("ascii", "backslashreplace").decode("ascii")
        for c in text
    ), error.end


codecs.register_error(SHOWN, _show_unencodable)


def shown(text: str) -> str:
    """``text`` fit to print or write as UTF-8: a non-UTF-8 file name's bytes as ``\\xNN``."""
    return text.encode("utf-8", SHOWN).decode("utf-8")


def require_utf8(path: str, what: str = "file") -> str:
    """``path`` unchanged if OpenCV can take it; a one-line error for a non-UTF-8 name."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise SetvisionError(
            f"{shown(path)}: the {what} name is not valid UTF-8, which OpenCV cannot open: "
            "rename it"
        ) from None
    return path


def encode_image(image: np.ndarray, suffix: str = ".jpg", quality: int | None = None) -> bytes:
    """``image`` (BGR) encoded as ``suffix`` (.jpg, .jpeg or .png)."""
    import cv2

    if suffix.lower() not in WRITABLE_SUFFIXES:
        raise SetvisionError(f"cannot write {suffix!r} images; use {', '.join(WRITABLE_SUFFIXES)}")
    params = [cv2.IMWRITE_JPEG_QUALITY, quality] if quality else []
    ok, buffer = cv2.imencode(suffix.lower(), image, params)
    if not ok:
        raise SetvisionError(f"the image cannot be encoded as {suffix}")
    return buffer.tobytes()


def write_file(path: str, data: bytes) -> None:
    """Write ``data`` whole or not at all (through a hidden partial file beside ``path``)."""
    folder, name = os.path.split(path)
    partial = os.path.join(folder, f".{name}.partial")
    try:
        with open(partial, "wb") as handle:
            handle.write(data)
        os.replace(partial, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.remove(partial)
        raise SetvisionError(f"{shown(path)}: cannot write ({error.strerror or error})") from None


def write_image(
    path: str, image: np.ndarray, quality: int | None = None, mark: bool = False
) -> None:
    """Write ``image`` in the format of ``path``'s suffix; ``mark`` it as ours (JPEG or PNG)."""
    data = encode_image(image, os.path.splitext(path)[1] or ".jpg", quality)
    if mark and data[:2] == b"\xff\xd8":
        data = data[:2] + _COMMENT + data[2:]
    elif mark and data[:8] == b"\x89PNG\r\n\x1a\n":
        data = data[:_PNG_HEADER] + _PNG_CHUNK + data[_PNG_HEADER:]
    write_file(path, data)


def is_marked(path: str) -> bool:
    """Whether ``path`` is a regular file that setvision wrote as an annotated image."""
    if not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as handle:
            start = handle.read(_PNG_HEADER + len(_PNG_CHUNK))
    except OSError:
        return False
    return start.startswith(b"\xff\xd8" + _COMMENT) or (
        start[:8] == b"\x89PNG\r\n\x1a\n" and start[_PNG_HEADER:] == _PNG_CHUNK
    )


def writable_folder(path: str, option: str) -> str:
    """Create the folder ``path`` if needed and check that a file can be written into it."""
    if os.path.lexists(path) and not os.path.isdir(path):
        raise SetvisionError(f"{shown(path)}: is a file, not a folder; {option} takes a folder")
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as error:
        raise SetvisionError(
            f"{shown(path)}: {option} cannot write there ({error.strerror or error})"
        ) from None
    return path


@dataclass(frozen=True)
class Output:
    """Where one input's annotated image goes; ``note`` says why if not the usual name."""

    path: str
    note: str = ""


def _key(path: str) -> str:
    """One spelling per file (case folded too: some file systems ignore case)."""
    return os.path.normcase(os.path.realpath(path)).lower()


def _file_id(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _inputs(sources: Sequence[str]) -> tuple[set[str], set[tuple[int, int]]]:
    """The photos read, by name and by file (a link or another spelling is the same photo)."""
    return {_key(p) for p in sources}, {i for i in map(_file_id, sources) if i is not None}


def annotated_outputs(out_dir: str, sources: Sequence[str]) -> list[Output]:
    """``NAME.annotated.jpg`` in ``out_dir`` for each source, made unique (``-2``, ``-3``...).

    A name is passed over when it is an input, another source's output of this run, or an
    existing file that setvision did not write; an earlier annotated image is replaced.
    """
    inputs, input_ids = _inputs(sources)
    taken: set[str] = set()
    outputs = []
    for source in sources:
        stem = os.path.splitext(os.path.basename(source))[0]
        usual = os.path.join(out_dir, f"{stem}.annotated.jpg")
        for n in itertools.count(1):
            path = usual if n == 1 else os.path.join(out_dir, f"{stem}.annotated-{n}.jpg")
            reason = _clash(path, inputs, input_ids, taken)
            if n == 1:
                first = reason
            if not reason:
                break
        taken.add(_key(path))
        if first:
            note = f"not {os.path.basename(usual)}: {first}"
        elif os.path.lexists(path):
            note = "replaces an earlier annotated image"
        else:
            note = ""
        outputs.append(Output(path, shown(note)))
    return outputs


def names_an_image(path: str) -> bool:
    """Whether ``--out path`` names one image file (by its suffix), not a folder."""
    return os.path.splitext(path)[1].lower() in WRITABLE_SUFFIXES and not os.path.isdir(path)


def annotated_file(path: str, sources: Sequence[str], option: str) -> list[Output]:
    """The one annotated image named ``path`` (``--out table.jpg``): for a single photo only,
    never onto that photo or a file setvision did not write."""
    if len(sources) != 1:
        raise SetvisionError(
            f"{shown(path)}: {option} names one image, but {len(sources)} photos are read: "
            f"give {option} a folder"
        )
    reason = _clash(path, *_inputs(sources), set())
    if reason:
        raise SetvisionError(f"{shown(path)}: {reason}; give {option} another name or a folder")
    writable_folder(os.path.dirname(path) or ".", option)
    note = "replaces an earlier annotated image" if os.path.lexists(path) else ""
    return [Output(path, note)]


def _clash(path: str, inputs: set[str], input_ids: set[tuple[int, int]], taken: set[str]) -> str:
    """Why ``path`` cannot be written, or '' if it can."""
    if _key(path) in inputs or _file_id(path) in input_ids:
        return "that is one of the photos read"
    if _key(path) in taken:
        return "another photo of this run has that name"
    if os.path.lexists(path) and not is_marked(path):
        return "a file not written by setvision is there"
    return ""
