"""What a JPEG's EXIF block says about the photo, read without a library.

A tiny reader: it walks the JPEG segments to the ``Exif`` APP1 block and reads IFD0's
orientation (how to turn the stored pixels upright) and, through IFD0's pointer to the Exif
IFD, the capture time (tag 0x9003, with its sub-second tag 0x9291 when present, so burst
photos keep their order). Anything malformed reads as "not said", never as an error.
"""

from __future__ import annotations

import struct
from datetime import datetime

#: Enough of a file's start to hold its EXIF block (APP1 is at most 64 KB and comes first).
HEADER_BYTES = 256 * 1024

_ORIENTATION = 0x0112
_EXIF_IFD_POINTER = 0x8769
_DATE_TIME_ORIGINAL = 0x9003
_SUB_SEC_TIME_ORIGINAL = 0x9291
_ASCII = 2


def _exif_block(data: bytes) -> bytes | None:
    """The TIFF structure inside a JPEG's Exif APP1 segment, or None."""
    if data[:2] != b"\xff\xd8":
        return None
    i = 2
    while i + 4 <= len(data) and data[i] == 0xFF:
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        length = struct.unpack(">H", data[i + 2 : i + 4])[0]
        if marker == 0xE1 and data[i + 4 : i + 10] == b"Exif\x00\x00":
            return data[i + 10 : i + 2 + length]
        if marker == 0xDA:  # start of scan: no metadata after this
            return None
        i += 2 + length
    return None


def _ifd(tiff: bytes, offset: int, endian: str) -> dict[int, tuple[int, int, bytes]]:
    """Tag -> (type, count, the 4 value-or-offset bytes) for one IFD."""
    (count,) = struct.unpack(endian + "H", tiff[offset : offset + 2])
    entries = {}
    for k in range(count):
        entry = tiff[offset + 2 + 12 * k : offset + 14 + 12 * k]
        if len(entry) < 12:
            break
        tag, kind, n = struct.unpack(endian + "HHI", entry[:8])
        entries[tag] = (kind, n, entry[8:12])
    return entries


def _ascii(tiff: bytes, entry: tuple[int, int, bytes], endian: str) -> str | None:
    kind, n, raw = entry
    if kind != _ASCII:
        return None
    if n <= 4:
        text = raw[:n]
    else:
        (offset,) = struct.unpack(endian + "I", raw)
        text = tiff[offset : offset + n]
    return text.split(b"\x00", 1)[0].decode("ascii", "replace").strip()


def _ifd0(data: bytes) -> tuple[bytes, str, dict[int, tuple[int, int, bytes]]] | None:
    """The TIFF block, its byte order and its first IFD, or None."""
    tiff = _exif_block(data)
    if tiff is None or len(tiff) < 8 or tiff[:2] not in (b"II", b"MM"):
        return None
    endian = "<" if tiff[:2] == b"II" else ">"
    try:
        (offset,) = struct.unpack(endian + "I", tiff[4:8])
        return tiff, endian, _ifd(tiff, offset, endian)
    except struct.error:
        return None


def orientation(data: bytes) -> int:
    """The EXIF orientation (1..8) of JPEG bytes; 1 (as stored) when absent or malformed."""
    found = _ifd0(data)
    if found is None or _ORIENTATION not in found[2]:
        return 1
    _, endian, ifd0 = found
    (value,) = struct.unpack(endian + "H", ifd0[_ORIENTATION][2][:2])
    return value if 1 <= value <= 8 else 1


def capture_time(data: bytes) -> datetime | None:
    """The moment a JPEG was taken (EXIF DateTimeOriginal), or None when it does not say.

    ``data`` needs only the file's first ``HEADER_BYTES``.
    """
    found = _ifd0(data)
    if found is None:
        return None
    tiff, endian, ifd0 = found
    try:
        pointer = ifd0.get(_EXIF_IFD_POINTER)
        if pointer is None:
            return None
        exif = _ifd(tiff, struct.unpack(endian + "I", pointer[2])[0], endian)
        if _DATE_TIME_ORIGINAL not in exif:
            return None
        text = _ascii(tiff, exif[_DATE_TIME_ORIGINAL], endian)
        moment = datetime.strptime(text or "", "%Y:%m:%d %H:%M:%S")
        sub = exif.get(_SUB_SEC_TIME_ORIGINAL)
        fraction = _ascii(tiff, sub, endian) if sub else None
    except (struct.error, ValueError):
        return None
    if fraction and fraction.isdigit():
        moment = moment.replace(microsecond=int(fraction[:6].ljust(6, "0")))
    return moment
