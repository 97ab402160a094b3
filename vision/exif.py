"""What a JPEG's (or a HEIC's) EXIF block says about the photo, read without a library.

A tiny reader: it walks the JPEG segments to the ``Exif`` APP1 block and reads IFD0's
orientation (how to turn the stored pixels upright) and, through IFD0's pointer to the Exif
IFD, the capture time (tag 0x9003, with its sub-second tag 0x9291 when present, so burst
photos keep their order). In a HEIC the block is the ``Exif`` item that the ``meta`` box
lists; only its capture time is read (a HEIF is turned upright by its own ``irot`` and ``imir``
boxes, which the decoder applies). Anything malformed reads as "not said", never as an error.
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


def _boxes(data: bytes, start: int, end: int):
    """(type, payload start, box end) of the ISO BMFF boxes between ``start`` and ``end``."""
    end = min(end, len(data))
    while start + 8 <= end:
        size, kind = struct.unpack_from(">I4s", data, start)
        header = 8
        if size == 1 and start + 16 <= end:
            size, header = struct.unpack_from(">Q", data, start + 8)[0], 16
        elif size == 0:
            size = end - start
        if size < header:
            return
        yield kind, start + header, min(start + size, end)
        start += size


def _child(data: bytes, kind: bytes, start: int, end: int) -> tuple[int, int] | None:
    """Payload start and end of the first box of ``kind`` in a range, or None."""
    return next(((s, e) for k, s, e in _boxes(data, start, end) if k == kind), None)


def _uint(data: bytes, at: int, size: int) -> int:
    """A big-endian unsigned integer of 0, 4 or 8 bytes (the sizes ``iloc`` allows)."""
    return int.from_bytes(data[at : at + size], "big") if size else 0


def _exif_item_id(data: bytes, iinf: tuple[int, int]) -> int | None:
    """The item ID of the ``Exif`` item in an ``iinf`` box (entries ``infe`` version 2 or 3)."""
    start, end = iinf
    first = start + (6 if data[start] == 0 else 8)  # version and flags, then the entry count
    for kind, at, _ in _boxes(data, first, end):
        version = data[at]
        if kind != b"infe" or version < 2:
            continue
        width = 2 if version == 2 else 4
        if data[at + 4 + width + 2 : at + 4 + width + 6] == b"Exif":
            return _uint(data, at + 4, width)
    return None


def _item_extent(data: bytes, iloc: tuple[int, int], item: int) -> tuple[int, int] | None:
    """File offset and length of an item's first extent in an ``iloc`` box, or None."""
    at, end = iloc
    version = data[at]
    sizes = data[at + 4], data[at + 5]
    offset_size, length_size = sizes[0] >> 4, sizes[0] & 15
    base_size, index_size = sizes[1] >> 4, (sizes[1] & 15 if version in (1, 2) else 0)
    id_size = 2 if version < 2 else 4
    count, at = _uint(data, at + 6, id_size), at + 6 + id_size
    for _ in range(count):
        if at >= end:
            return None
        item_id, at = _uint(data, at, id_size), at + id_size
        method = 0
        if version in (1, 2):
            method, at = data[at + 1] & 15, at + 2
        base, at = _uint(data, at + 2, base_size), at + 2 + base_size
        extents, at = _uint(data, at, 2), at + 2
        first = at + index_size
        at += extents * (index_size + offset_size + length_size)
        if item_id == item:
            if method != 0 or extents < 1:
                return None  # kept in an idat box or elsewhere: not read here
            offset = base + _uint(data, first, offset_size)
            return offset, _uint(data, first + offset_size, length_size)
    return None


def _heif_exif_block(data: bytes) -> bytes | None:
    """The TIFF structure of a HEIC's ``Exif`` item, or None (also when beyond ``data``)."""
    if data[4:8] != b"ftyp":
        return None
    meta = _child(data, b"meta", 0, len(data))
    if meta is None:
        return None
    start, end = meta[0] + 4, meta[1]  # meta is a full box: version and flags first
    iinf, iloc = _child(data, b"iinf", start, end), _child(data, b"iloc", start, end)
    item = None if iinf is None else _exif_item_id(data, iinf)
    extent = None if item is None or iloc is None else _item_extent(data, iloc, item)
    if extent is None or extent[0] + extent[1] > len(data) or extent[1] < 4:
        return None
    offset, length = extent
    skip = _uint(data, offset, 4)  # bytes before the TIFF header (usually "Exif\0\0")
    return data[offset + 4 + skip : offset + length]


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


def _ifd0(tiff: bytes | None) -> tuple[bytes, str, dict[int, tuple[int, int, bytes]]] | None:
    """The TIFF block, its byte order and its first IFD, or None."""
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
    found = _ifd0(_exif_block(data))
    if found is None or _ORIENTATION not in found[2]:
        return 1
    _, endian, ifd0 = found
    (value,) = struct.unpack(endian + "H", ifd0[_ORIENTATION][2][:2])
    return value if 1 <= value <= 8 else 1


def capture_time(data: bytes) -> datetime | None:
    """The moment a JPEG or HEIC was taken (EXIF DateTimeOriginal), or None when it does not say.

    ``data`` needs only the file's first ``HEADER_BYTES`` (a HEIC whose Exif item lies further
    on reads as not saying).
    """
    try:
        found = _ifd0(_exif_block(data) or _heif_exif_block(data))
    except (struct.error, IndexError):
        return None
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
