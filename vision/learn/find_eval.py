"""Measure card finding alone: found outlines against labelled outlines and card centres.

Truth comes from two kinds of labels: ``outlines.jsonl`` (a polygon for every card, matched by
overlap) and the boards with card centres (a centre must lie inside a found outline). Cards cut
off by the border so that less than half of them shows, and cards labelled partial, count
neither way: finding them is not required, and finding them is not an error.
"""

from __future__ import annotations

import json
import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path

import cv2
import numpy as np
from scipy.optimize import linear_sum_assignment
from setvision.solver.errors import SetvisionError
from setvision.vision.geometry import contains_point, convex_iou, touches_border
from setvision.vision.learn.dataset import LABELS_DIR, Board
from setvision.vision.learn.matching import match_by_position

#: A found outline is the labelled card when they overlap by at least this (intersection/union).
MATCH_IOU = 0.5
#: A card cut by the border showing less than this share of the photo's typical card is partial.
PARTIAL_SHARE = 0.5
#: A labelled outline with a corner this close to the border (pixels) may be cut by it.
BORDER_PX = 3.0
#: Outlines thinner than this (pixels), or smaller than this share of the photo's typical card,
#: are slips of the labelling tool (points and lines), not cards.
DEGENERATE_WIDTH, DEGENERATE_SHARE = 4.0, 0.1
#: Photos of one capture session are less than this far apart (minutes).
SESSION_GAP_MIN = 20

Finder = Callable[[np.ndarray], list[np.ndarray]]


@dataclass(frozen=True)
class PhotoReading:
    """A photo's cards as a reader gives them (each one's outline and what it was read as), and
    the answer a user is shown for them (``vetting_eval.shown_answer``; None: not given)."""

    cards: list[tuple[np.ndarray, str]]
    answer: str | None = None

    def moved(self, to_photo: Callable[[np.ndarray], np.ndarray]) -> PhotoReading:
        """The same reading with each outline mapped by ``to_photo`` (e.g. to the photo's own
        pixels from a resized or turned copy's)."""
        return PhotoReading([(to_photo(q), card) for q, card in self.cards], self.answer)


#: A reader for the scale check: each card of a photo as its outline and what it was read as,
#: as a list or with the answer shown for them (``PhotoReading``).
Reader = Callable[[np.ndarray], "list[tuple[np.ndarray, str]] | PhotoReading"]


def _reading(reader: Reader, image: np.ndarray) -> PhotoReading:
    """What ``reader`` gives for ``image``, as a ``PhotoReading`` (outlines as float64)."""
    given = reader(image)
    reading = given if isinstance(given, PhotoReading) else PhotoReading(list(given))
    return reading.moved(lambda q: np.asarray(q, np.float64))


@dataclass
class FindTruth:
    """Where the cards of one photo are: polygons, or centres, and what counts neither way."""

    file: str
    path: str
    source: str
    polygons: list[np.ndarray] = field(default_factory=list)
    centres: list[tuple[float, float]] = field(default_factory=list)
    ignore_polygons: list[np.ndarray] = field(default_factory=list)
    ignore_centres: list[tuple[float, float]] = field(default_factory=list)
    group: str = ""  # the capture session (photos that must stay on one side of a split)

    @property
    def labelled(self) -> int:
        return len(self.polygons) + len(self.centres)


@dataclass
class FindResult:
    file: str
    source: str
    group: str
    labelled: int
    found: int
    detections: int
    false_detections: int
    ms: float
    error: str | None = None
    fallback: bool = False  # the previous finder was asked too

    @property
    def complete(self) -> bool:
        """Every card found and nothing else taken for a card."""
        return self.error is None and self.found == self.labelled and self.false_detections == 0


def session_of(file: str) -> datetime | None:
    """The capture time in a phone's file name (``PHOTO-2025-06-08-19-59-59``), if any."""
    match = re.search(r"(\d{4})-(\d\d)-(\d\d)[-_](\d\d)-(\d\d)-(\d\d)", file)
    return datetime(*map(int, match.groups())) if match else None


def capture_sessions(files: Iterable[str]) -> dict[str, str]:
    """Each file's capture session: photos taken less than ``SESSION_GAP_MIN`` apart."""
    stamped = sorted((t, f) for f in files if (t := session_of(f)) is not None)
    sessions, last, label = {}, None, ""
    for stamp, file in stamped:
        if last is None or (stamp - last).total_seconds() > SESSION_GAP_MIN * 60:
            label = stamp.strftime("%Y-%m-%d %H:%M")
        sessions[file] = label
        last = stamp
    return sessions


#: Corrections to ``outlines.jsonl`` found by eye, kept as data (one JSON object a line).
OUTLINE_FIXES = LABELS_DIR / "outline_fixes.jsonl"


def load_outline_fixes(path: Path | None = None) -> list[dict]:
    """The outline corrections (``labels/outline_fixes.jsonl``), in file order."""
    path = path if path is not None else OUTLINE_FIXES
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def apply_outline_fixes(entries: list[dict], fixes: list[dict]) -> list[dict]:
    """``outlines.jsonl`` entries with the corrections made: ``drop`` removes outline
    ``outline`` (an index into the published list), ``replace`` puts ``polygon`` in its place,
    ``add`` appends ``polygon``, ``exclude`` leaves the photo out (its outlines belong to another
    frame or are beyond repair). Indices always refer to the published list."""
    by_file: dict[str, list[dict]] = defaultdict(list)
    for fix in fixes:
        by_file[fix["file"]].append(fix)
    fixed = []
    for entry in entries:
        own = by_file.get(entry["file"], [])
        if not own:
            fixed.append(entry)
            continue
        if any(f["action"] == "exclude" for f in own):
            continue
        outlines: list = list(entry.get("outlines") or [])
        added = []
        for fix in own:
            action, index = fix["action"], fix.get("outline", -1)
            if action == "add":
                added.append(fix["polygon"])
            elif action in ("drop", "replace") and 0 <= index < len(outlines):
                outlines[index] = fix["polygon"] if action == "replace" else None
            else:
                raise SetvisionError(f"outline fix not applicable: {fix}")
        fixed.append({**entry, "outlines": [p for p in outlines if p is not None] + added})
    return fixed


def outline_truths(data_dir: Path, fixes_file: Path | None = None) -> list[FindTruth]:
    """Every photo of ``outlines.jsonl`` with its polygons (unlabelled photos left out), the
    corrections of ``labels/outline_fixes.jsonl`` (or ``fixes_file``) made."""
    path = data_dir / "outlines.jsonl"
    if not path.is_file():
        return []
    entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    entries = apply_outline_fixes(entries, load_outline_fixes(fixes_file))
    entries = [e for e in entries if e.get("outlines")]
    sessions = capture_sessions(e["file"] for e in entries)
    truths = []
    for entry in entries:
        size = tuple(entry["image_size"])
        polygons = [np.asarray(p, np.float64) for p in entry["outlines"]]
        polygons = [
            p for p in polygons if min(cv2.minAreaRect(p.astype(np.float32))[1]) >= DEGENERATE_WIDTH
        ]
        areas = [cv2.contourArea(p.astype(np.float32)) for p in polygons]
        typical = float(np.median(areas)) if areas else 0.0
        polygons = [p for p, a in zip(polygons, areas) if a >= DEGENERATE_SHARE * typical]
        keep, ignore = [], []
        for polygon in polygons:
            small = cv2.contourArea(polygon.astype(np.float32)) < PARTIAL_SHARE * typical
            (ignore if small and touches_border(polygon, size, BORDER_PX) else keep).append(polygon)
        truths.append(
            FindTruth(entry["file"], str(data_dir / entry["file"]), entry["source"],
                      polygons=keep, ignore_polygons=ignore,
                      group=sessions.get(entry["file"], entry["source"]))
        )  # fmt: skip
    return truths


def centre_truths(boards: Iterable[Board]) -> list[FindTruth]:
    """Boards whose labels give every card's centre."""
    return [
        FindTruth(b.file, b.path, b.source, centres=[c.centre for c in b.cards],
                  ignore_centres=list(b.partial), group=b.source)
        for b in boards
        if b.has_positions
    ]  # fmt: skip


def _pairs(cost: np.ndarray, allowed: np.ndarray) -> list[tuple[int, int]]:
    if cost.size == 0:
        return []
    rows, columns = linear_sum_assignment(np.where(allowed, cost, 1e9))
    return [(int(i), int(j)) for i, j in zip(rows, columns) if allowed[i, j]]


def score_found(truth: FindTruth, quads: list[np.ndarray]) -> tuple[int, int]:
    """(cards found, false detections) of one photo's found outlines."""
    quads = [np.asarray(q, np.float64) for q in quads]
    used: set[int] = set()
    found = 0
    if truth.polygons:
        iou = np.array([[convex_iou(p, q) for q in quads] for p in truth.polygons]).reshape(
            len(truth.polygons), len(quads)
        )
        pairs = _pairs(-iou, iou >= MATCH_IOU)
        found += len(pairs)
        used |= {j for _, j in pairs}
    if truth.centres:
        pairs = match_by_position(quads, truth.centres)
        found += len(pairs)
        used |= {j for _, j in pairs}
    neutral = 0
    for j, quad in enumerate(quads):
        if j in used:
            continue
        if any(convex_iou(p, quad) >= MATCH_IOU for p in truth.ignore_polygons) or any(
            contains_point(quad, c) for c in truth.ignore_centres
        ):
            neutral += 1
    return found, len(quads) - len(used) - neutral


def evaluate_finding(truth: FindTruth, image: np.ndarray, finder: Finder) -> FindResult:
    """Find the cards of one decoded photo and score them."""
    start = time.perf_counter()
    quads = finder(image)
    ms = (time.perf_counter() - start) * 1000
    found, false = score_found(truth, quads)
    return FindResult(truth.file, truth.source, truth.group, truth.labelled, found, len(quads),
                      false, ms)  # fmt: skip


@dataclass(frozen=True)
class FindSummary:
    photos: int
    cards: int
    recall: float
    precision: float
    complete: float  # share of photos with every card found and nothing extra
    median_ms: float
    p95_ms: float


def summarise_finding(results: list[FindResult], key: str = "source") -> dict[str, FindSummary]:
    """Per ``key`` (source or group) and over all (``"all"``)."""
    groups: dict[str, list[FindResult]] = defaultdict(list)
    for result in results:
        groups[getattr(result, key)].append(result)
    table = {name: _summary(rows) for name, rows in sorted(groups.items())}
    if results:
        table["all"] = _summary(results)
    return table


def _summary(rows: list[FindResult]) -> FindSummary:
    labelled = sum(r.labelled for r in rows)
    found = sum(r.found for r in rows)
    detections = sum(r.found + r.false_detections for r in rows)
    times = [r.ms for r in rows]
    return FindSummary(
        len(rows), labelled, found / labelled if labelled else 1.0,
        found / detections if detections else 1.0,
        sum(r.complete for r in rows) / len(rows),
        float(np.median(times)), float(np.percentile(times, 95)),
    )  # fmt: skip


def incomplete_lines(results: Iterable[FindResult]) -> list[str]:
    """One line per photo not found complete: cards found of those labelled, false cards, and
    whether the previous finder was asked."""
    return [
        f"{r.file}: found {r.found}/{r.labelled}, false {r.false_detections}"
        + (", previous finder asked" if r.fallback else "")
        + (f", error {r.error}" if r.error else "")
        for r in results
        if not r.complete
    ]


def _ms(value: float) -> str:
    return f"{value:.0f}" if value > 0 else "-"  # not timed (judged from cached candidates)


def format_find_table(table: dict[str, FindSummary]) -> str:
    """A Markdown table, one row per source (or group) and the overall row."""
    lines = [
        "| source | photos | cards | recall | precision | every card, nothing extra "
        "| find ms median | p95 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in table.items():
        label = f"**{name}**" if name == "all" else name
        lines.append(
            f"| {label} | {s.photos} | {s.cards} | {s.recall:.3f} | {s.precision:.3f} "
            f"| {s.complete:.3f} | {_ms(s.median_ms)} | {_ms(s.p95_ms)} |"
        )
    return "\n".join(lines)


def _default_finder(image: np.ndarray) -> list[np.ndarray]:
    from setvision.vision.find.finder import find_cards

    return [o.corners_xy for o in find_cards(image).outlines]


def previous_finder(image: np.ndarray) -> list[np.ndarray]:
    """The previous, hand-set finder alone (for comparison)."""
    from setvision.vision.find.outlines import find_outlines

    return [o.corners_xy for o in find_outlines(image)]


@dataclass(frozen=True)
class InFrame:
    """A finder reading each photo letterboxed into a camera's frame (``size``: width,
    height), as ``setvision bench`` times it; its cards given back in the photo's pixels."""

    size: tuple[int, int]
    finder: Finder | None = None

    def __call__(self, image: np.ndarray) -> list[np.ndarray]:
        from setvision.vision.image import letterbox_placed

        frame, factor, offset = letterbox_placed(image, self.size)
        quads = (self.finder or _default_finder)(frame)
        return [(np.asarray(q, np.float64) - offset) / factor for q in quads]


def _job(args: tuple[FindTruth, Finder | None]) -> FindResult:
    from setvision.vision.image import load

    truth, finder = args
    try:
        photo = load(truth.path)
    except Exception as error:  # a photo that cannot be read is reported, not fatal
        return FindResult(truth.file, truth.source, truth.group, truth.labelled, 0, 0, 0, 0.0,
                          str(error))  # fmt: skip
    scale = photo.scale

    def scaled(image: np.ndarray) -> list[np.ndarray]:
        return [np.asarray(q) * scale for q in (finder or _default_finder)(image)]

    return evaluate_finding(truth, photo.image, scaled)


def _map_photos(function, items: list, jobs: int, progress, label) -> list:
    """``function`` over ``items`` in ``jobs`` processes, in order, reporting each done."""
    if jobs > 1:
        from multiprocessing import get_context

        with get_context("fork").Pool(jobs) as pool:
            done = pool.imap(function, items, chunksize=4)
            return [_reported(row, progress, label) for row in done]
    return [_reported(function(item), progress, label) for item in items]


def _reported(row, progress, label):
    if progress:
        progress(label(row))
    return row


def run_finding(
    truths: list[FindTruth],
    finder: Finder | None = None,
    jobs: int = 1,
    progress: Callable[[str], None] | None = None,
) -> list[FindResult]:
    """Find the cards of every photo (in ``jobs`` processes) and score them."""
    items = [(t, finder) for t in truths]
    return _map_photos(_job, items, jobs, progress, lambda r: r.file)


#: The long sides a photo is read at to check that the cards found do not depend on its size.
SCALE_SIDES = (800, 1200, 1600)
#: The JPEG quality a photo is saved again at, to check that its cards do not change (what a
#: phone's share sheet or an editor's "save as" does to a photo).
RESAVE_QUALITY = 85
#: Two readings agree on a card when its outlines overlap by at least this (intersection/union).
SAME_CARD_IOU = 0.5
#: A photo is also read at its own size times these factors: resized by a few percent, as a
#: phone, a messenger or an editor does, it must give the same cards.
NEAR_FACTORS = (0.95, 1.05)
#: A photo is also read turned a quarter round (clockwise) and half round (``cv2.rotate``
#: codes): taken with the phone held the other way, or from the other side of the table, it
#: must give the same cards.
TURNS = (cv2.ROTATE_90_CLOCKWISE, cv2.ROTATE_180)


def _matched(a: list[np.ndarray], b: list[np.ndarray]) -> list[tuple[int, int]] | None:
    """The outlines of ``a`` and ``b`` (one photo's pixels) paired card for card, or None
    unless every outline of each has its pair."""
    if len(a) != len(b):
        return None
    if not a:
        return []
    iou = np.array([[convex_iou(p, q) for q in b] for p in a])
    pairs = _pairs(-iou, iou >= SAME_CARD_IOU)
    return pairs if len(pairs) == len(a) else None


@dataclass(frozen=True)
class Agreement:
    """Whether readings of one photo hold the same cards, each read as the same card, and give
    the same answer (None: a reading without an answer was compared)."""

    found: bool
    read: bool
    answered: bool | None = None


def _compared(a: PhotoReading, b: PhotoReading) -> Agreement:
    """How far two readings of a photo agree (``Agreement``)."""
    answered = None if a.answer is None or b.answer is None else a.answer == b.answer
    pairs = _matched([q for q, _ in a.cards], [q for q, _ in b.cards])
    if pairs is None:
        return Agreement(False, False, answered)
    return Agreement(True, all(a.cards[i][1] == b.cards[j][1] for i, j in pairs), answered)


def same_readings(a: list[tuple[np.ndarray, str]], b: list[tuple[np.ndarray, str]]) -> bool:
    """Whether two readings of a photo (each card's outline and what it was read as) hold the
    same cards, each read as the same card."""
    return _compared(PhotoReading(a), PhotoReading(b)).read


def scale_agreement(
    image: np.ndarray, finder: Finder, sides: tuple[int, ...] = SCALE_SIDES
) -> tuple[bool, list[int]]:
    """Whether the photo read at each long side gives the same cards (in its own pixels), and
    how many cards each size gave."""
    agreement, counts = readings_agreement(image, _labelled(finder), sides)
    return agreement.found, counts


def readings_at_side(image: np.ndarray, reader: Reader, side: int) -> PhotoReading:
    """What ``reader`` reads in the photo resized to long side ``side``, each card's outline in
    the photo's own pixels."""
    from setvision.vision.image import rescale

    factor = side / max(image.shape[:2])
    return _reading(reader, rescale(image, factor)).moved(lambda q: q / factor)


def readings_agreement(
    image: np.ndarray, reader: Reader, sides: tuple[int, ...] = SCALE_SIDES
) -> tuple[Agreement, list[int]]:
    """How far the photo's readings at each long side agree (its cards in its own pixels), and
    how many cards each size gave."""
    sized = [readings_at_side(image, reader, side) for side in sides]
    return _agree(sized[0], sized[1:]), [len(reading.cards) for reading in sized]


def _agree(own: PhotoReading, others: list[PhotoReading]) -> Agreement:
    """Whether each of the ``others`` readings of a photo agrees with ``own``, on each count."""
    compared = [_compared(own, other) for other in others]
    answered = [c.answered for c in compared]
    return Agreement(
        all(c.found for c in compared),
        all(c.read for c in compared),
        None if None in answered else all(answered),
    )


def _labelled(finder: Finder) -> Reader:
    """A finder as a reader that reads every card alike: compared, only its outlines count."""
    return lambda image: [(q, "") for q in finder(image)]


def resaved(image: np.ndarray, quality: int = RESAVE_QUALITY) -> np.ndarray:
    """``image`` saved as a JPEG of this ``quality`` and decoded again."""
    ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("OpenCV could not encode the photo as JPEG")
    return cv2.imdecode(encoded, cv2.IMREAD_COLOR)


def resaved_readings(image: np.ndarray, reader: Reader) -> list[PhotoReading]:
    """The photo re-saved (``resaved``) and read: one reading."""
    return [_reading(reader, resaved(image))]


def near_readings(image: np.ndarray, reader: Reader) -> list[PhotoReading]:
    """The photo resized by a few percent (``NEAR_FACTORS``) and read, in its own pixels."""
    side = max(image.shape[:2])
    return [readings_at_side(image, reader, round(side * factor)) for factor in NEAR_FACTORS]


def turned_readings(image: np.ndarray, reader: Reader) -> list[PhotoReading]:
    """The photo turned (``TURNS``) and read, in its own pixels."""
    size = (image.shape[1], image.shape[0])
    return [
        _reading(reader, cv2.rotate(image, turn)).moved(partial(turned_back, turn=turn, size=size))
        for turn in TURNS
    ]


def _with_own(image: np.ndarray, finder: Finder, own: list[np.ndarray] | None, others) -> bool:
    """Whether the ``others`` readings (a function of the photo and a reader) of the photo hold
    the cards ``finder`` gives for it as it is (``own``, if already found)."""
    reader = _labelled(finder)
    own_read = _reading(reader, image) if own is None else PhotoReading([(q, "") for q in own])
    return _agree(own_read, others(image, reader)).found


def resave_agreement(
    image: np.ndarray, finder: Finder, own: list[np.ndarray] | None = None
) -> bool:
    """Whether the photo re-saved (``resaved``) gives the same cards as the photo itself
    (``own``: its cards, if already found)."""
    return _with_own(image, finder, own, resaved_readings)


def near_agreement(image: np.ndarray, finder: Finder, own: list[np.ndarray] | None = None) -> bool:
    """Whether the photo gives the same cards at its own size and resized by a few percent
    (``NEAR_FACTORS``; ``own``: its cards at its own size, if already found)."""
    return _with_own(image, finder, own, near_readings)


def turned_back(points: np.ndarray, turn: int, size: tuple[int, int]) -> np.ndarray:
    """``points`` (N, 2) of a photo of ``size`` (width, height) turned by ``turn`` (a
    ``cv2.rotate`` code of ``TURNS``), in the photo's own pixels."""
    points = np.asarray(points, np.float64).reshape(-1, 2)
    width, height = size
    x, y = points[:, 0], points[:, 1]
    if turn == cv2.ROTATE_90_CLOCKWISE:  # (x, y) was turned to (height - 1 - y, x)
        return np.stack([y, height - 1 - x], axis=1)
    if turn == cv2.ROTATE_180:
        return np.stack([width - 1 - x, height - 1 - y], axis=1)
    raise ValueError(f"not a turn setvision checks: {turn}")


def turn_agreement(image: np.ndarray, finder: Finder, own: list[np.ndarray] | None = None) -> bool:
    """Whether the photo gives the same cards as it is and turned (``TURNS``; ``own``: its
    cards as it is, if already found)."""
    return _with_own(image, finder, own, turned_readings)


@dataclass(frozen=True)
class ScaleCheck:
    """One photo read at several sizes, re-saved, resized a little and turned: whether its
    cards stay the same."""

    file: str
    source: str
    same: bool  # at long sides ``SCALE_SIDES``
    counts: list[int]  # cards at each of those sides
    same_resaved: bool
    same_near: bool  # at its own size and ``NEAR_FACTORS`` times
    same_turned: bool  # as it is and turned (``TURNS``)
    #: whether the learned finder's outlines, which a reader's cards come from, are the same at
    #: the sizes too (None: not asked): where they are and the cards are not, the reader decided
    same_outlines: bool | None = None
    #: whether the cards at the sizes are each read as the same card too (None: not asked)
    same_read: bool | None = None
    #: ... and re-saved, resized by a few percent and turned as well (None: not asked)
    read_every_way: bool | None = None
    #: whether the answer a user is shown (the verdict and the sets, ``PhotoReading.answer``)
    #: is the same at the sizes (None: the reader gives none)
    same_answer: bool | None = None
    #: ... and re-saved, resized by a few percent and turned as well (None: the reader gives none)
    answer_every_way: bool | None = None


def _scale_job(args: tuple[FindTruth, Finder | None, bool, Reader | None]) -> ScaleCheck:
    from setvision.vision.image import load

    truth, finder, outlines_too, given = args
    image = load(truth.path).image
    reader = given or _labelled(finder or _default_finder)
    sizes, counts = readings_agreement(image, reader)
    own = _reading(reader, image)  # read once for the comparisons with the photo itself
    ways = [_agree(own, others(image, reader))
            for others in (resaved_readings, near_readings, turned_readings)]  # fmt: skip
    resaved_, near, turned = ways
    same_outlines = scale_agreement(image, _default_finder)[0] if outlines_too else None
    read = given is not None  # else every card reads alike: only outlines were compared
    every_way = sizes.read and all(way.read for way in ways)
    answers = [sizes.answered, *(way.answered for way in ways)]
    answer_every_way = None if None in answers else all(answers)
    return ScaleCheck(truth.file, truth.source, sizes.found, counts, resaved_.found, near.found,
                      turned.found, same_outlines, sizes.read if read else None,
                      every_way if read else None, sizes.answered,
                      answer_every_way)  # fmt: skip


def run_scale_agreement(
    truths: list[FindTruth],
    finder: Finder | None = None,
    jobs: int = 1,
    progress: Callable[[str], None] | None = None,
    outlines_too: bool = False,
    reader: Reader | None = None,
) -> list[ScaleCheck]:
    """Every photo read at several sizes, re-saved, resized a little and turned
    (``ScaleCheck``); with ``outlines_too`` (``finder`` reads the learned finder's outlines),
    whether those stay the same at the sizes too; with a ``reader`` (the same cards as
    ``finder``'s, each with what it was read as), the sizes' cards come from it, and whether
    each is read the same at every size is checked too."""
    items = [(t, finder, outlines_too, reader) for t in truths]
    return _map_photos(_scale_job, items, jobs, progress, lambda r: r.file)


def decided_by_the_reader(checks: list[ScaleCheck]) -> tuple[int, int]:
    """Of the photos whose cards differ between sizes (and whose outlines were compared too),
    how many there are and how many of them get the same outlines at every size."""
    differ = [c for c in checks if not c.same and c.same_outlines is not None]
    return len(differ), sum(bool(c.same_outlines) for c in differ)
