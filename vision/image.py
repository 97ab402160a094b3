"""Reading and validating images, in one place.

Every photo enters through here: the file is checked (exists, not empty, complete), decoded
with its EXIF orientation applied, converted to 8-bit BGR, and large photos are decoded at a
reduced size for speed while ``scale`` keeps the mapping back to the original pixels.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import stat
import struct
import sys
import tempfile
import threading
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import cv2
import numpy as np
from setvision.vision.errors import ImageError

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

#: Larger photos are refused: decoding them would take gigabytes of memory.
MAX_PIXELS = 120_000_000  # also OpenCV's own limit, set in the package's __init__
#: Photos are decoded at 1/2, 1/4 or 1/8 while the long side stays at least this long.
DECODE_LONG_SIDE = 1600
#: A photo whose channels part by less than this (levels of 255) at its most colourful pixels
#: (this percentile of them) holds no colour: greyscale stored as RGB, or with JPEG's noise.
COLOURLESS_SPREAD, COLOURFUL_SHARE = 12, 99.9
#: How the image libraries' messages for damaged data begin (libjpeg's, then libpng's).
DAMAGE_MESSAGES = ("Corrupt JPEG data", "Premature end", "Invalid JPEG", "libpng error")
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff", ".heic", ".heif")
#: ``ftyp`` major brands of HEIF stills and sequences coded in HEVC (iPhone photos are "heic").
#: AVIF ("avif") is left out: the pillow-heif wheels carry no AV1 decoder.
HEIF_BRANDS = frozenset({b"heic", b"heix", b"hevc", b"heim", b"heis", b"hevm", b"mif1", b"msf1"})

_STDERR_LOCK = threading.Lock()
cv2.utils.logging.setLogLevel(
    cv2.utils.logging.LOG_LEVEL_SILENT
)  # OpenCV's own messages would reach the user's terminal beside setvision's line


@dataclass(frozen=True)
class Photo:
    """A decoded photo: ``image`` is (H, W, 3) uint8 BGR, ``scale`` maps it to original pixels.

    ``size`` is the original (width, height) after EXIF orientation: a pixel (x, y) of
    ``image`` lies at (x * scale, y * scale) in the original photo.
    """

    source: str
    image: np.ndarray
    size: tuple[int, int]
    scale: float
    #: what the decoder reported while decoding (corrupt data): the picture may be partly wrong
    warnings: tuple[str, ...] = ()


def as_bgr(image: np.ndarray, name: str = "image") -> np.ndarray:
    """Check an array and return it as (H, W, 3) uint8 BGR; refuse what cannot hold colour."""
    if not isinstance(image, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, got {type(image).__name__}")
    if image.size == 0:
        raise ImageError(f"{name} is empty")
    if image.ndim == 2 or (image.ndim == 3 and image.shape[2] == 1):
        raise ImageError(f"{name} is greyscale: colours cannot be read, use a colour photo")
    if image.ndim != 3 or image.shape[2] not in (3, 4):
        raise ImageError(f"{name} must have shape (H, W, 3), got {image.shape}")
    if image.dtype == np.uint16:
        image = (image >> 8).astype(np.uint8)
    elif image.dtype in (np.float32, np.float64):
        image = np.clip(image * 255.0, 0, 255).astype(np.uint8)
    elif image.dtype != np.uint8:
        raise ImageError(f"{name} has pixel type {image.dtype}; expected uint8 or uint16")
    if image.shape[2] == 4:
        image = image[:, :, :3]
    if min(image.shape[:2]) < 16:
        raise ImageError(f"{name} is too small ({image.shape[1]}x{image.shape[0]} pixels)")
    return np.ascontiguousarray(image)


def refuse_colourless(image: np.ndarray, name: str) -> np.ndarray:
    """The image, unless it holds no colour though stored as colour (a greyscale photo saved as
    RGB or with an alpha channel): every card would read as one colour, so it is refused like
    greyscale. Judged on a sample of pixels: how far the channels part at the most colourful."""
    step = max(1, min(image.shape[:2]) // 400)
    sample = image[::step, ::step].reshape(-1, 3)
    spread = sample.max(axis=1).astype(np.int16) - sample.min(axis=1)
    if float(np.percentile(spread, COLOURFUL_SHARE)) < COLOURLESS_SPREAD:
        raise ImageError(
            f"{name} holds no colour (greyscale): colours cannot be read, use a colour photo"
        )
    return image


def header_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from a PNG or JPEG header without decoding the pixels."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return struct.unpack(">II", data[16:24])
    if data[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(data):
            if data[i] != 0xFF:
                i += 1
                continue
            marker = data[i + 1]
            if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
                i += 2
                continue
            length = struct.unpack(">H", data[i + 2 : i + 4])[0]
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                height, width = struct.unpack(">HH", data[i + 5 : i + 9])
                return width, height
            i += 2 + length
    return None


def orient_points(points: np.ndarray, orientation: int, stored_size: tuple[int, int]) -> np.ndarray:
    """Map (x, y) points of the stored pixel grid to the grid after EXIF orientation."""
    w, h = stored_size
    x, y = np.asarray(points, dtype=np.float64).T
    mapping = {
        1: (x, y), 2: (w - 1 - x, y), 3: (w - 1 - x, h - 1 - y), 4: (x, h - 1 - y),
        5: (y, x), 6: (h - 1 - y, x), 7: (h - 1 - y, w - 1 - x), 8: (y, w - 1 - x),
    }  # fmt: skip
    return np.stack(mapping.get(orientation, (x, y)), axis=1)


#: Markers that stand alone, without a length: TEM, SOI and the restart markers RST0-RST7.
_STANDALONE = frozenset({0x01, 0xD8, *range(0xD0, 0xD8)})


def _scan_end(data: bytes, i: int) -> int:
    """Index of the marker that ends the entropy-coded data starting at ``i``, else ``len(data)``.

    Inside a scan 0xFF is followed by 0x00 (a stuffed byte), a restart marker or more 0xFF fill.
    """
    while (i := data.find(b"\xff", i)) != -1 and i + 1 < len(data):
        following = data[i + 1]
        if following == 0xFF:
            i += 1
        elif following == 0x00 or 0xD0 <= following <= 0xD7:
            i += 2
        else:
            return i
    return len(data)


def jpeg_end(data: bytes) -> int | None:
    """Offset just past a JPEG's end-of-image marker (EOI), or None if the data stops before it.

    Walks the segments from SOI as libjpeg reads them (each skipped by its length, each scan's
    entropy-coded data up to the next marker), so bytes appended after EOI (Samsung, Pixel
    motion photos) and 0xFFD9 inside segments or the appended bytes are not taken for the end.
    """
    i = 2
    while (i := data.find(b"\xff", i)) != -1 and i + 1 < len(data):
        marker = data[i + 1]
        if marker == 0xD9:
            return i + 2
        if marker in (0xFF, 0x00):  # fill before a marker; a stray stuffed byte, skipped by libjpeg
            i += 1 if marker == 0xFF else 2
        elif marker in _STANDALONE:
            i += 2
        elif i + 4 > len(data):
            return None
        else:
            i += 2 + struct.unpack_from(">H", data, i + 2)[0]
            if marker == 0xDA:  # start of scan: the entropy-coded data follows its header
                i = _scan_end(data, i)
    return None


def heif_brand(data: bytes) -> bytes | None:
    """The ``ftyp`` major brand if ``data`` is a HEIC/HEIF file (see ``HEIF_BRANDS``), else None."""
    if data[4:8] == b"ftyp" and data[8:12] in HEIF_BRANDS:
        return data[8:12]
    return None


def bmff_end(data: bytes) -> int | None:
    """Offset past the last top-level box of an ISO BMFF file (HEIC), or None if one is cut off.

    Each box starts with its 32-bit size (1: a 64-bit size follows the type; 0: up to the end),
    so a file that stops inside its ``mdat`` (the coded pixels) shows as a box running past it.
    """
    i = 0
    while i + 8 <= len(data):
        size = struct.unpack_from(">I", data, i)[0]
        if size == 0:
            return len(data)
        if size == 1:
            if i + 16 > len(data):
                return None
            size = struct.unpack_from(">Q", data, i + 8)[0]
        if size < 8:
            return i  # not a box: the decoder will say what is wrong
        if i + size > len(data):
            return None
        i += size
    return i if not data[i:].strip(b"\x00") else None


def _truncated(data: bytes) -> bool:
    """Whether a JPEG stops before its EOI, a PNG before its IEND chunk, a HEIC inside a box."""
    if data[:2] == b"\xff\xd8":
        return jpeg_end(data) is None
    if heif_brand(data):
        return bmff_end(data) is None
    tail = data.rstrip(b"\x00")
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return b"IEND" not in tail[-16:]
    return False


def _too_large(source: str, stated: str = "") -> ImageError:
    """The one line for a photo over ``MAX_PIXELS``; ``stated``: its size as known, if it is."""
    size = f"{stated} is " if stated else ""
    return ImageError(
        f"{source}: {size}too large (over {MAX_PIXELS // 1_000_000} megapixels); resize it first"
    )


def _check_pixels(size: tuple[int, int], source: str) -> None:
    """Refuse a photo over ``MAX_PIXELS`` from its stated size, before any pixel is decoded."""
    if size[0] * size[1] > MAX_PIXELS:
        raise _too_large(source, f"{size[0]}x{size[1]}")


def _stated_size(data: bytes, source: str) -> tuple[int, int]:
    """Width and height of a TIFF, WebP, BMP or other photo as its header states them, read by
    Pillow without decoding a pixel; (0, 0) when Pillow does not know the format (OpenCV then
    decodes it under its own pixel limit, set from ``MAX_PIXELS`` in the package's import)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # checked by us
            with Image.open(io.BytesIO(data)) as image:
                return image.size
    except Image.DecompressionBombError as error:  # Pillow's own, larger limit: no size given
        pixels = re.search(r"\((\d+) pixels\)", str(error))
        stated = f"{int(pixels[1]) // 1_000_000} megapixels" if pixels else ""
        raise _too_large(source, stated) from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, struct.error, EOFError):
        return 0, 0


def _decode_quietly(data: bytes, flags: int) -> tuple[np.ndarray | None, list[str]]:
    """OpenCV's decode, with what its image libraries print (libjpeg: "Corrupt JPEG data: ...",
    libpng's warnings) taken from the terminal and returned, so that damage can be reported
    with the photo's answer instead of beside it. A lock keeps threads from mixing them."""
    with _STDERR_LOCK, tempfile.TemporaryFile() as captured:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(captured.fileno(), 2)
        try:
            image = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), flags)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        captured.seek(0)
        lines = captured.read(4096).decode("utf-8", "replace").splitlines()
    return image, [" ".join(line.split()) for line in lines if line.strip()]


def _damage(messages: list[str]) -> tuple[str, ...]:
    """The decoder's reports of damaged data, worded for the user (libpng's notes on colour
    profiles and the like are not damage)."""
    damaged = [m for m in messages if m.startswith(DAMAGE_MESSAGES)]
    if not damaged:
        return ()
    return (f"the photo's data is damaged ({damaged[0]}): part of the picture may be wrong",)


def _reduction(size: tuple[int, int]) -> int:
    """1, 2, 4 or 8: the largest shrink that keeps the long side at least ``DECODE_LONG_SIDE``."""
    reduction = 1
    while reduction < 8 and max(size) / (reduction * 2) >= DECODE_LONG_SIDE:
        reduction *= 2
    return reduction


def _one_line(error: Exception) -> str:
    """A library's error message on one line (libheif's can span several)."""
    return " ".join(str(error).split()) or type(error).__name__


def _upright(image: PILImage) -> PILImage:
    """The image turned by its EXIF orientation; an unreadable EXIF says nothing, as for JPEG."""
    from PIL import ImageOps

    with contextlib.suppress(SyntaxError, ValueError, TypeError, KeyError, struct.error):
        ImageOps.exif_transpose(image, in_place=True)
    return image


def _decode_heif(data: bytes, source: str) -> Photo:
    """Decode HEIC/HEIF bytes with pillow-heif: upright, 8-bit BGR, reduced as JPEGs are.

    HEIF carries the orientation as rotation and mirroring boxes, which libheif applies;
    pillow-heif then sets the EXIF orientation to 1 so that the turn is not made twice, and
    ``exif_transpose`` (then a no-op) turns the image only if an orientation is left there.
    """
    import pillow_heif

    try:
        heif = pillow_heif.open_heif(io.BytesIO(data), convert_hdr_to_8bit=True)
        _check_pixels(heif.size, source)  # from the header: no pixel decoded yet
        image = _upright(heif.to_pillow())
    except (OSError, ValueError, RuntimeError, SyntaxError, EOFError, IndexError) as error:
        raise ImageError(
            f"{source}: a damaged HEIC/HEIF file that cannot be decoded ({_one_line(error)})"
        ) from None
    size = image.size
    reduction = _reduction(size)
    if reduction > 1:
        image = image.reduce(reduction)
    mode = "L" if image.mode in ("L", "LA") else "RGB"  # alpha dropped; greyscale refused below
    if image.mode != mode:
        image = image.convert(mode)
    pixels = np.asarray(image)
    if pixels.ndim == 3:
        pixels = pixels[:, :, 2::-1]  # RGB to BGR
    pixels = refuse_colourless(as_bgr(pixels, source), source)
    return Photo(source, pixels, size, size[0] / pixels.shape[1])


def decode(data: bytes, source: str = "image") -> Photo:
    """Decode encoded image bytes (EXIF orientation applied) into a ``Photo``."""
    if not data:
        raise ImageError(f"{source}: the file is empty")
    if _truncated(data):
        raise ImageError(f"{source}: the file is truncated (an incomplete download or copy?)")
    if heif_brand(data):
        return _decode_heif(data, source)
    header = header_size(data)
    reduction = 1
    _check_pixels(header if header is not None else _stated_size(data, source), source)
    if header is not None:
        reduction = _reduction(header)
    flags = {
        1: cv2.IMREAD_ANYCOLOR | cv2.IMREAD_ANYDEPTH,
        2: cv2.IMREAD_REDUCED_COLOR_2,
        4: cv2.IMREAD_REDUCED_COLOR_4,
        8: cv2.IMREAD_REDUCED_COLOR_8,
    }[reduction]
    if data[:2] != b"\xff\xd8":
        flags, reduction = cv2.IMREAD_ANYCOLOR | cv2.IMREAD_ANYDEPTH, 1  # reduced decode: JPEG only
    try:
        image, messages = _decode_quietly(data, flags)
    except cv2.error as error:
        if "MAX_IMAGE_PIXELS" in str(error):
            raise _too_large(source) from None
        image, messages = None, []
    if image is None:
        raise ImageError(
            f"{source}: not an image file that can be read (JPEG, PNG, BMP, WebP, TIFF, HEIC)"
        )
    if image.ndim == 3 and image.shape[2] == 4:
        image = image[:, :, :3]
    image = refuse_colourless(as_bgr(image, source), source)
    damage = _damage(messages)
    height, width = image.shape[:2]
    if reduction > 1:
        # Reduced decoding rounds up; the original size follows from the header and EXIF turn.
        full = header if (header[0] >= header[1]) == (width >= height) else header[::-1]
        return Photo(source, image, (int(full[0]), int(full[1])), full[0] / width, damage)
    return Photo(source, image, (width, height), 1.0, damage)


def _refuse_unusual(path: str, mode: int) -> None:
    """A folder, pipe, device or socket is refused by its type, before a byte is read."""
    if stat.S_ISDIR(mode):
        raise ImageError(f"{path}: is a folder, not an image")
    if not stat.S_ISREG(mode):
        raise ImageError(f"{path}: not a regular file (a pipe, device or socket): not read")


def read_regular(path: str, limit: int = -1) -> bytes:
    """The bytes of a regular file (the first ``limit`` if given); an ``ImageError`` if not one.

    A named pipe or a device would block or never end, so the file's type is checked first,
    then it is opened without blocking and checked again by its descriptor (it may have
    changed in between).
    """
    try:
        _refuse_unusual(path, os.stat(path).st_mode)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise ImageError(f"{path}: no such file") from None
    except OSError as error:
        raise ImageError(f"{path}: cannot be read ({error.strerror})") from None
    except ValueError:  # a NUL character: no file can have such a name
        raise ImageError(f"{path!r}: not a file name (it holds a NUL character)") from None
    with os.fdopen(fd, "rb") as handle:
        _refuse_unusual(path, os.fstat(handle.fileno()).st_mode)
        try:
            return handle.read(limit)
        except OSError as error:
            raise ImageError(f"{path}: cannot be read ({error.strerror})") from None


def load(path: str) -> Photo:
    """Read a photo from disk; every failure is an ``ImageError`` naming the file."""
    return decode(read_regular(path), path)


def resize_long_side(image: np.ndarray, long_side: int) -> tuple[np.ndarray, float]:
    """Shrink so the long side is at most ``long_side``; return the image and the factor used."""
    height, width = image.shape[:2]
    factor = min(1.0, long_side / max(height, width))
    if factor >= 1.0:
        return image, 1.0
    size = (max(1, round(width * factor)), max(1, round(height * factor)))
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA), factor


def rescale(image: np.ndarray, factor: float, size: tuple[int, int] | None = None) -> np.ndarray:
    """``image`` scaled by ``factor`` (to ``size``, width and height, when given; else its sides
    times ``factor``, rounded): averaged when shrinking, interpolated when enlarging."""
    if size is None:
        size = (round(image.shape[1] * factor), round(image.shape[0] * factor))
    interpolation = cv2.INTER_AREA if factor < 1 else cv2.INTER_LINEAR
    return cv2.resize(image, size, interpolation=interpolation)


def letterbox(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The whole image scaled to fit ``size`` (width, height), centred on a black frame: a
    camera's shape."""
    return letterbox_placed(image, size)[0]


def letterbox_placed(
    image: np.ndarray, size: tuple[int, int]
) -> tuple[np.ndarray, float, np.ndarray]:
    """``letterbox``'s frame, the factor the image was scaled by and where its top-left corner
    lies in the frame (x, y): a frame's pixel p is the image's (p - offset) / factor."""
    width, height = size
    factor = min(width / image.shape[1], height / image.shape[0])
    scaled = rescale(image, factor)
    frame = np.zeros((height, width, 3), np.uint8)
    y0, x0 = (height - scaled.shape[0]) // 2, (width - scaled.shape[1]) // 2
    frame[y0 : y0 + scaled.shape[0], x0 : x0 + scaled.shape[1]] = scaled
    return frame, factor, np.array([x0, y0], np.float64)


def filled(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The image scaled to cover ``size`` (width, height) and cut to it about its centre: a
    frame with no bars, as a camera filling its frame with the table gives."""
    width, height = size
    factor = max(width / image.shape[1], height / image.shape[0])
    cover = (
        max(width, round(image.shape[1] * factor)),
        max(height, round(image.shape[0] * factor)),
    )
    scaled = rescale(image, factor, cover)
    y0, x0 = (scaled.shape[0] - height) // 2, (scaled.shape[1] - width) // 2
    return np.ascontiguousarray(scaled[y0 : y0 + height, x0 : x0 + width])
