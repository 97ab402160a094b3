"""Review a batch of photos after the fact: read each in a worker pool, keep the results.

Each worker builds its reader once, reads its photos through the application layer's
``read_photo`` (as ``detect`` does) and writes their annotated images itself, so only small
contract records cross process boundaries. The results feed the report (vision.report) and,
for a game sequence, the replay (solver.replay).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import cv2
from setvision.app.readers import NO_PROFILE, ProfileChoice
from setvision.app.reading import read_photo
from setvision.solver import Card
from setvision.solver.errors import SetvisionError
from setvision.solver.replay import Replay, SeenCard, Snapshot, replay
from setvision.vision.contract import error_record
from setvision.vision.exif import HEADER_BYTES, capture_time
from setvision.vision.image import read_regular, resize_long_side
from setvision.vision.pipeline import CardReader
from setvision.vision.report.files import write_image
from setvision.vision.report.overlay import Annotator

logger = logging.getLogger(__name__)

#: Annotated images in the report are at most this long (pixels), to keep the report light.
REPORT_LONG_SIDE = 1280
IMAGES_DIR = "images"


#: Builds a reader; it must pickle (a module-level function or a functools.partial of one),
#: e.g. ``partial(app.readers.make_reader, ProfileChoice("kitchen"))``.
ReaderFactory = Callable[[], CardReader]


@dataclass(frozen=True)
class PhotoResult:
    """One photo reviewed: its contract record (or ``error``) and its annotated image.

    ``image`` is relative to the report folder; ``record`` is the contract line.
    """

    index: int
    source: str
    record: dict
    image: str | None = None

    @property
    def error(self) -> str | None:
        return self.record.get("error")

    @property
    def verdict(self) -> str:
        return "error" if self.error else self.record["verdict"]

    @property
    def cards(self) -> list[dict]:
        return self.record.get("cards", [])

    @property
    def sets(self) -> list[list[int]]:
        return self.record.get("sets", [])

    @property
    def uncertain_ids(self) -> list[int]:
        return [u["id"] for u in self.record.get("uncertain", [])]

    @property
    def needs_look(self) -> bool:
        """Failed, no cards, a card read without confidence, or a card maybe missed."""
        return bool(
            self.error
            or self.verdict in ("uncertain", "no_cards")
            or self.uncertain_ids
            or self.record.get("doubts")
        )


@dataclass(frozen=True)
class Summary:
    photos: int
    cards: int
    sets: int
    needs_look: int
    unreadable: int

    @classmethod
    def of(cls, results: Sequence[PhotoResult]) -> Summary:
        return cls(
            photos=len(results),
            cards=sum(len(r.cards) for r in results),
            sets=sum(len(r.sets) for r in results),
            needs_look=sum(r.needs_look for r in results),
            unreadable=sum(r.error is not None for r in results),
        )


@dataclass(frozen=True)
class Review:
    """Every photo in report order, the totals, how they were ordered, and the replay."""

    results: tuple[PhotoResult, ...]
    summary: Summary
    order: str
    replay: Replay | None = None


# ---------------------------------------------------------------- order


def read_capture_time(path: str) -> datetime | None:
    """EXIF DateTimeOriginal of a file, or None (unreadable files included)."""
    try:
        return capture_time(read_regular(path, HEADER_BYTES))
    except SetvisionError:
        return None


def capture_order(paths: Sequence[str]) -> tuple[list[str], str]:
    """Photos in the order they were taken, and a line saying how that order was found.

    EXIF capture time when every photo has one (ties broken by name), else file name: a
    partial set of times cannot place the photos without one.
    """
    times = {path: read_capture_time(path) for path in paths}
    by_name = sorted(paths, key=lambda p: (os.path.basename(p), p))
    if paths and all(times.values()):
        ordered = sorted(by_name, key=lambda p: times[p])
        return ordered, "ordered by EXIF capture time (DateTimeOriginal)"
    missing = sum(t is None for t in times.values())
    if missing == len(paths):
        return by_name, "ordered by file name: the photos carry no EXIF capture time"
    return by_name, f"ordered by file name: {missing} of {len(paths)} photos carry no capture time"


# ---------------------------------------------------------------- workers

_reader: CardReader | None = None
_profile: ProfileChoice = NO_PROFILE


def _start_worker(make_reader: ReaderFactory, profile: ProfileChoice, single_thread: bool) -> None:
    """Pool initializer: one reader per worker process, built once for the chosen profile."""
    global _reader, _profile
    if single_thread:
        cv2.setNumThreads(1)  # the pool already keeps every core busy
    _reader, _profile = make_reader(), profile


def _image_name(index: int, source: str) -> str:
    """``images/NNN-stem.jpg``; bytes of a name that are not UTF-8 become ``_`` (for links)."""
    stem = os.path.splitext(os.path.basename(source))[0]
    stem = os.fsencode(stem).decode("utf-8", "replace").replace("\ufffd", "_")
    return f"{IMAGES_DIR}/{index:03d}-{stem}.jpg"


def _image_names(paths: Sequence[str], out_dir: str) -> list[str]:
    """Each photo's annotated image, never one of the photos read (``-copy`` added if so)."""
    inputs = {os.path.realpath(p) for p in paths}
    names = []
    for index, source in enumerate(paths, 1):
        name = _image_name(index, source)
        while os.path.realpath(os.path.join(out_dir, name)) in inputs:
            name = f"{os.path.splitext(name)[0]}-copy.jpg"
        names.append(name)
    return names


def _review_one(task: tuple[int, str, str, str]) -> PhotoResult:
    """Read one photo and write its annotated image; every failure becomes a record."""
    index, source, out_dir, name = task
    try:
        reading = read_photo(source, _reader, _profile)
    except SetvisionError as error:
        message = str(error) if str(error).startswith(source) else f"{source}: {error}"
        return PhotoResult(index, source, error_record(source, message))
    except Exception as error:  # a bug on one photo must not stop the batch
        logger.debug("reading %s failed", source, exc_info=True)
        message = f"{source}: internal error: {type(error).__name__}: {error}"
        return PhotoResult(index, source, error_record(source, message))
    record, photo = reading.record, reading.photo
    image, factor = resize_long_side(photo.image, REPORT_LONG_SIDE)
    picture = Annotator().annotate(image, reading.layout.scaled(factor / photo.scale))
    try:
        write_image(os.path.join(out_dir, name), picture, quality=85)
    except SetvisionError:
        record["warning"] = "the annotated image could not be written"
        return PhotoResult(index, source, record)
    record["annotated"] = name
    return PhotoResult(index, source, record, name)


def _pool_context(make_reader: ReaderFactory):
    """forkserver where there is one (no fork of a threaded parent), else spawn.

    The server imports this module and the factory's once, so workers start in a blink.
    """
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        factory = getattr(make_reader, "func", make_reader)
        context.set_forkserver_preload([factory.__module__, __name__])
    return context


def read_all(
    paths: Sequence[str],
    out_dir: str,
    make_reader: ReaderFactory,
    profile: ProfileChoice,
    jobs: int,
    on_done: Callable[[str], None] | None = None,
) -> list[PhotoResult]:
    """Read every photo (``jobs`` processes) with the reader ``make_reader`` builds for
    ``profile`` and write the annotated images; input order kept."""
    try:
        os.makedirs(os.path.join(out_dir, IMAGES_DIR), exist_ok=True)
    except OSError as error:
        raise SetvisionError(f"{out_dir}: cannot create the report folder ({error})") from None
    names = _image_names(paths, out_dir)
    tasks = [(i, path, out_dir, name) for (i, path), name in zip(enumerate(paths, 1), names)]
    jobs = max(1, min(jobs, len(tasks)))
    _start_worker(make_reader, profile, single_thread=False)  # checks the options before a pool
    results = []
    if jobs == 1:
        for task in tasks:
            results.append(_review_one(task))
            if on_done:
                on_done(task[1])
    else:
        context = _pool_context(make_reader)
        with context.Pool(jobs, _start_worker, (make_reader, profile, True)) as pool:
            for result in pool.imap_unordered(_review_one, tasks):
                results.append(result)
                if on_done:
                    on_done(result.source)
    return sorted(results, key=lambda r: r.index)


# ---------------------------------------------------------------- replay input


def snapshot(result: PhotoResult) -> Snapshot:
    """A photo's cards as the replay sees them: identity, confidence, number on the photo."""
    name = os.path.basename(result.source)
    if result.error:
        return Snapshot(name, error=result.error)
    if not result.cards:
        return Snapshot(name, error="no cards found")
    uncertain = set(result.uncertain_ids)
    cards = tuple(
        SeenCard(
            Card(int(c["number"]), c["color"], c["shading"], c["shape"]),
            c["id"] not in uncertain,
            c["id"],
        )
        for c in result.cards
    )
    return Snapshot(name, cards, complete=not result.record.get("doubts"))


def review(
    paths: Sequence[str],
    out_dir: str,
    make_reader: ReaderFactory,
    profile: ProfileChoice,
    jobs: int = 1,
    sequence: bool = False,
    on_done: Callable[[str], None] | None = None,
) -> Review:
    """Read the photos (in capture order for a sequence) with the reader ``make_reader`` builds
    for ``profile``, and replay the game when asked."""
    if sequence:
        paths, order = capture_order(paths)
    else:
        order = "in the order given (folders in file-name order)"
    results = read_all(paths, out_dir, make_reader, profile, jobs, on_done)
    game = replay([snapshot(r) for r in results]) if sequence else None
    return Review(tuple(results), Summary.of(results), order, game)
