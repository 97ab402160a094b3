"""Read the table from a video, frame after frame, reusing the work of earlier frames.

Full card detection is the costly step, so it runs only every few frames, or when something
calls for it (on the finder's own work copy of the frame, as for a photo: a smaller copy loses
cards its model was not fitted for); in between, cards are followed by optical flow on a
reduced copy. A card is measured again only when it is new, when its look changed (taken,
swapped, covered) or when the camera has moved enough since its last reading to give an
independent view. Readings are voted per card by the tracker (``vision.tracking``), so numbers
and set outlines hold still.

A frame is therefore not read as a photo is (``app.reading.read_photo``): that would find,
measure and classify every card again on every frame, which is the cost this module exists to
avoid. The reader (model, profile, per-photo calibration) is the one the application layer
chose (``app.readers.make_reader``); only its parts are called here.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import cv2
import numpy as np
from setvision.solver import Card
from setvision.vision.contract import layout_record
from setvision.vision.find.finder import find_cards, unexplained_cards
from setvision.vision.find.outlines import Outline
from setvision.vision.geometry import (
    contains_point,
    convex_iou,
    convex_overlap,
    side_lengths,
    touches_border,
)
from setvision.vision.image import as_bgr
from setvision.vision.layout import CONFIDENT, UNSURE, CardReading, Ignored
from setvision.vision.live.motion import (
    QuadFlow,
    apply_homography,
    likeness,
    loose_paper,
    table_colours,
    table_share,
    thumbnail,
    work_copy,
)
from setvision.vision.live.source import Frame
from setvision.vision.live.tracking import LiveLayout, Track, Tracker
from setvision.vision.pipeline import CardReader, MeasuredCard, worth_reading_again
from setvision.vision.read.rescue import best_reading, rescued, still_possible
from setvision.vision.read.settle import settle
from setvision.vision.read.vetting import set_aside

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LiveSettings:
    """How much work each frame gets; the defaults aim at 30 analysed frames/s at 1280x720."""

    detect_every: int = 10  # analysed frames between full detections
    quiet_detect_every: int = 30  # the same while nothing on the table has changed
    work_long_side: int = 640  # optical flow and thumbnails run on a copy this large
    confirms_per_frame: int = 3  # second readings per frame of new cards not yet shown
    rereads_per_frame: int = 1  # further re-readings per frame (not on detection frames)
    changed_below: float = 0.4  # likeness to the card as read below which its look changed
    same_above: float = 0.7  # likeness above which it is surely still the same card
    hold_frames: int = 2  # a changed look must hold this many frames before it is re-read
    moved_fraction: float = 0.25  # camera motion (of the card's size) that earns a new reading
    inside_fraction: float = 0.6  # a card this much less inside the frame than when read left
    min_points: int = 6  # a card followed by fewer flow points is given new ones
    new_paper: float = 0.005  # new card-like paper (share of the frame) that calls detection
    bare_above: float = 0.9  # share of a card's place in the table's colours once it was taken
    covered_frames: int = 30  # a card unreadable under a still new look this long is gone


@dataclass(frozen=True)
class _Work:
    """The frame being analysed: full size for reading, a reduced copy for following."""

    index: int
    image: np.ndarray
    small: np.ndarray
    grey: np.ndarray
    factor: float  # small = image * factor

    def thumb(self, corners_xy: np.ndarray) -> np.ndarray:
        return thumbnail(self.small, corners_xy * self.factor)


@dataclass
class _CardView:
    """What the analyser keeps per track: its look and features at the latest reading."""

    reference: np.ndarray
    measured: MeasuredCard
    inside: float  # the share of the card inside the frame
    changed: np.ndarray | None = None
    changed_frames: int = 0
    asked: bool = False  # detection was asked for since the look changed so


@dataclass(frozen=True)
class _Pending:
    """An outline to measure this frame, and why: a new card, a changed one, or a refresh."""

    outline: Outline
    track_id: int | None
    reason: str  # "new" | "changed" (found by detection) | "check" (not found) | "refresh"
    thumb: np.ndarray
    found_probability: float = 1.0  # the finder's, for a new card
    net_place: bool = False  # a place the card net sees and no candidate outlines
    uncovered: Outline | None = None  # the finder's ``Found.uncovered`` for it


@dataclass
class LiveAnalyser:
    """Turns frames into ``LiveLayout``s; one instance follows one video from its start."""

    reader: CardReader
    settings: LiveSettings = field(default_factory=LiveSettings)
    tracker: Tracker = field(default_factory=Tracker)

    def __post_init__(self) -> None:
        self.flow = QuadFlow()
        self._views: dict[int, _CardView] = {}
        self._since_detection = 0
        self._detect_soon = True
        self._quiet = False
        self._loose_before: float | None = None
        self._ignored: tuple[Ignored, ...] = ()
        #: where the last detection said a card may be missed (``Found.possible``)
        self._possible: tuple[np.ndarray, ...] = ()
        self._rejected: list[Ignored] = []  # outlines found unreadable at the last detection
        self._table: np.ndarray | None = None  # the table's colours (``table_colours``)

    def analyse(self, frame: Frame) -> LiveLayout:
        """The table at this frame (frames must come in order; some may be skipped)."""
        start = time.perf_counter()
        image = as_bgr(frame.image, "frame")
        small, grey, factor = work_copy(image, self.settings.work_long_side)
        work = _Work(frame.index, image, small, grey, factor)
        timings: dict[str, float] = {}

        self._follow(work)
        if self._loose_before is not None and self._since_detection >= 3:
            rise = self._loose_paper(work) - self._loose_before
            if rise > max(self.settings.new_paper, 0.25 * self._loose_before):
                self._detect_soon = True  # paper where no card is followed: cards dealt?
        timings["track"] = _ms(start)
        every = self.settings.quiet_detect_every if self._quiet else self.settings.detect_every
        due = self._since_detection + 1 >= every or self._detect_soon
        confirmed: set[int] = set()
        pending: list[_Pending] = []
        detected: set[int] | None = None  # the tracks detection found, on a detection frame
        if due:
            mark = time.perf_counter()
            pending += self._detect(work, confirmed)
            detected = set(confirmed)
            timings["detect"] = _ms(mark)
            self._since_detection, self._detect_soon = 0, False
        else:
            self._since_detection += 1
        pending += self._check_looks(work, confirmed, detected)
        if due:
            for track_id in self.tracker.detected(confirmed):
                self._forget(track_id)
            tracks = self.tracker.tracks.values()
            self._quiet = not any(p.reason == "new" for p in pending) and all(
                t.misses == 0 and t.settled for t in tracks
            )
            if all(t.settled for t in tracks):  # no hand over a card: what shows is the table
                self._learn_table(work, pending, confirmed)
        mark = time.perf_counter()
        self._read(work, pending)
        timings["read"] = _ms(mark)
        if due:
            self._loose_before = self._loose_paper(work)
        timings["total"] = _ms(start)
        size = (image.shape[1], image.shape[0])
        explained = [t.corners_xy for t in self.tracker.tracks.values()]
        explained += [i.corners_xy for i in self._ignored]  # a shape set aside is named already
        possible = tuple(unexplained_cards(self._possible, explained))
        return self.tracker.snapshot(frame.index, frame.t, size, self._ignored, timings, possible)

    # ------------------------------------------------------------ steps

    def _follow(self, work: _Work) -> None:
        """Move every track by optical flow; drop those that left the view."""
        for track_id, motion in self.flow.step(work.grey).items():
            track = self.tracker.tracks.get(track_id)
            if track is None:
                continue
            if motion is None:  # lost: let detection find it again
                self._detect_soon = True
                continue
            if not motion.agrees:
                self._quiet = False
            moved = apply_homography(motion.matrix, track.corners_xy * work.factor) / work.factor
            if not _plausible_move(track.corners_xy, moved):  # flow went wrong: ask detection
                self._detect_soon = True
                self.flow.seed(track_id, work.grey, track.corners_xy * work.factor)
                continue
            self.tracker.move(track_id, moved)
            if self.flow.count(track_id) < self.settings.min_points:
                self.flow.seed(track_id, work.grey, moved * work.factor)
        self._merge_duplicates(work)
        for track_id, track in list(self.tracker.tracks.items()):
            inside = _inside(track.corners_xy, work.image.shape)
            if inside < self.settings.inside_fraction * self._views[track_id].inside:
                self._drop(track_id)

    def _loose_paper(self, work: _Work) -> float:
        quads = [t.corners_xy * work.factor for t in self.tracker.tracks.values()]
        quads += [i.corners_xy * work.factor for i in self._ignored]
        return loose_paper(work.small, quads)

    def _merge_duplicates(self, work: _Work) -> None:
        """Two tracks on one card: the older (more votes) stays, where detection saw either."""
        tracks = sorted(self.tracker.tracks.values(), key=lambda t: t.id)
        centres = np.array([t.corners_xy.mean(axis=0) for t in tracks])
        sizes = np.array([np.sqrt(max(_area(t.corners_xy), 1.0)) for t in tracks])
        dropped: set[int] = set()
        for i, older in enumerate(tracks):
            for j in range(i + 1, len(tracks)):
                newer = tracks[j]
                if np.linalg.norm(centres[i] - centres[j]) > sizes[i] + sizes[j]:
                    continue  # far apart: surely two cards
                if {older.id, newer.id} & dropped or not _same_card(older, newer):
                    continue
                if newer.misses < older.misses:  # detection found the newer one lately
                    self.tracker.move(older.id, newer.corners_xy)
                    self.flow.seed(older.id, work.grey, newer.corners_xy * work.factor)
                dropped.add(newer.id)
                self._drop(newer.id)

    def _detect(self, work: _Work, confirmed: set[int]) -> list[_Pending]:
        """Find outlines, snap matching tracks to them; the rest are new cards to read."""
        found = find_cards(work.image)  # the finder's own work copy, as for a photo
        shown = [o.corners_xy for o in found.outlines]  # no "no set" over them, as for a photo
        self._possible = tuple(still_possible(work.image, found.possible, shown))
        pending, rejected, ignored = [], [], []
        tracks = self.tracker.match(o.corners_xy for o in found.outlines)
        for outline, track_id, probability, whole in zip(
            found.outlines, tracks, found.probabilities, found.uncovered_each
        ):
            if track_id is not None:
                confirmed.add(track_id)
                self.tracker.move(track_id, outline.corners_xy)
                self.flow.seed(track_id, work.grey, outline.corners_xy * work.factor)
            elif self._covered(outline.corners_xy):
                continue  # a second outline on a card already followed
            elif (before := self._unreadable(outline.corners_xy)) is not None:
                rejected.append(before)  # unreadable a moment ago, still in place
                ignored.append(Ignored(outline.corners_xy, before.reason))
            else:
                thumb = work.thumb(outline.corners_xy)
                pending.append(_Pending(outline, None, "new", thumb, probability, uncovered=whole))
        for place in found.net_places:  # taken only if read surely (``vision.read.rescue``)
            corners = place.corners_xy
            if not self._covered(corners) and self._unreadable(corners) is None:
                thumb = work.thumb(corners)
                pending.append(_Pending(place, None, "new", thumb, 0.0, net_place=True))
        self._rejected, self._ignored = rejected, tuple(ignored)
        return pending

    def _surest_place(
        self,
        work: _Work,
        place: Outline,
        measured: MeasuredCard,
        reading: CardReading,
        context: list[MeasuredCard],
    ) -> tuple[MeasuredCard, CardReading]:
        """A net place's reading, or a variant's of its outline when only that one reads as a
        card (as ``CardReader.read_place`` on a photo), each read among the cards followed."""
        options = [(measured, reading)]
        for variant in self.reader.measure_variants(work.image, place, reading.confidence):
            options.append((variant, self.reader.classify([*context, variant])[-1]))
        best = best_reading([r.confidence for _, r in options])
        return options[0 if best is None else best]

    def _unreadable(self, corners_xy: np.ndarray) -> Ignored | None:
        return next((i for i in self._rejected if convex_iou(corners_xy, i.corners_xy) > 0.8), None)

    def _covered(self, corners_xy: np.ndarray) -> bool:
        """Whether the outline's centre lies on a card already followed."""
        centre = tuple(np.asarray(corners_xy).mean(axis=0))
        return any(contains_point(t.corners_xy, centre) for t in self.tracker.tracks.values())

    def _check_looks(
        self, work: _Work, confirmed: set[int], detected: set[int] | None
    ) -> list[_Pending]:
        """Compare each card with its look when read: changed ones (and a few old ones) to read.

        A card whose new look holds waits for the next detection (asked for at once): found
        there, it is read again as it is (``changed``: it may be another card now, if read so
        confidently or after ``covered_frames``: a card under a hand is found too); not found
        where the table's own colours show, it was taken and its track goes; not found and not
        bare (a hand over it), it is only checked (``check``: still the same card?), and stays
        until detection has missed it ``Tracker.max_misses`` times. Bare table can read as a
        card, so no reading alone keeps a card whose place detection does not vouch for; and a
        card unreadable where no bare table shows (covered) stays, unsettled, for
        ``covered_frames``.
        """
        settings = self.settings
        refresh = detected is None
        pending, unshown, stale, gone = [], [], [], []
        for track_id, track in self.tracker.tracks.items():
            view = self._views[track_id]
            thumb = work.thumb(track.corners_xy)
            like = likeness(view.reference, thumb)
            outline = _outline(track.corners_xy, work.image.shape)
            if like >= settings.same_above:
                confirmed.add(track_id)
                if not track.ready:
                    unshown.append(_Pending(outline, track_id, "refresh", thumb))
                elif self._worth_refreshing(track, work.index):
                    stale.append((track.last_read, _Pending(outline, track_id, "refresh", thumb)))
            if like >= settings.changed_below:
                view.changed, view.changed_frames, view.asked = None, 0, False
                if not track.settled:
                    self.tracker.resettle(track_id)
                continue
            self.tracker.unsettle(track_id)
            self._quiet = False
            if view.changed is not None and likeness(view.changed, thumb) >= settings.same_above:
                view.changed_frames += 1
            else:
                view.changed, view.changed_frames, view.asked = thumb, 1, False
            if view.changed_frames < settings.hold_frames:
                continue
            if detected is None:  # wait for detection's word
                if not view.asked:
                    self._detect_soon, view.asked = True, True
            elif track_id in detected:
                pending.append(_Pending(outline, track_id, "changed", thumb))
            elif self._bare(work, track.corners_xy):
                gone.append(track_id)
            else:
                pending.append(_Pending(outline, track_id, "check", thumb))
        for track_id in gone:
            self._drop(track_id)
        pending += unshown[: settings.confirms_per_frame]
        if refresh:
            stale.sort(key=lambda item: item[0])  # the longest unread first
            pending += [p for _, p in stale[: settings.rereads_per_frame]]
        return pending

    def _learn_table(self, work: _Work, pending: list[_Pending], confirmed: set[int]) -> None:
        """The table's colours, from what shows outside every card and outline; none when a
        card in place (confirmed by its look or by detection, or a new outline) would read as
        bare table in them: off-white paper of cards not followed (at the picture's edge) or a
        pale table make colours that cannot tell a taken card from one lying there."""
        tracks = self.tracker.tracks
        quads = [t.corners_xy for t in tracks.values()] + [i.corners_xy for i in self._ignored]
        quads += [p.outline.corners_xy for p in pending]
        colours = table_colours(work.small, [q * work.factor for q in quads])
        in_place = [tracks[k].corners_xy for k in confirmed if k in tracks]
        in_place += [p.outline.corners_xy for p in pending if p.reason in ("new", "refresh")]
        if any(
            table_share(work.small, q * work.factor, colours) >= self.settings.bare_above
            for q in in_place
        ):
            colours = None
        self._table = colours

    def _bare(self, work: _Work, corners_xy: np.ndarray) -> bool:
        """Whether a card's place shows bare table: no detail at all, or the table's colours."""
        if not work.thumb(corners_xy).any():
            return True
        if self._table is None:
            return False
        share = table_share(work.small, corners_xy * work.factor, self._table)
        return share >= self.settings.bare_above

    def _worth_refreshing(self, track: Track, frame: int) -> bool:
        """A new view (the camera moved), or an unsure card with room for more votes."""
        size = float(np.sqrt(max(_area(track.corners_xy), 1.0)))
        shift = float(np.abs(track.corners_xy - track.read_corners).max())
        if shift > self.settings.moved_fraction * size:
            return True
        if len(track.votes) >= track.votes.maxlen or track.card is None:
            return False
        unsure = CardReading(track.corners_xy, track.voted(), track.card).confidence < CONFIDENT
        return unsure and frame - track.last_read >= 3

    def _read(self, work: _Work, pending: list[_Pending]) -> None:
        """Measure the pending outlines and classify them among the cards already known."""
        fresh: list[tuple[_Pending, MeasuredCard]] = []
        ignored = list(self._ignored)
        for item in pending:
            if item.net_place:  # as a photo's outlines are measured
                found = self.reader.measure_outline(work.image, item.outline)
            else:
                found = self.reader.measure_found(work.image, item.outline, item.uncovered)
            if isinstance(found, MeasuredCard):
                fresh.append((item, found))
            elif item.net_place:
                continue  # the net's coarse place holds no card to read: nothing to show
            elif item.reason == "new":
                ignored.append(found)
                self._rejected.append(found)
            elif item.track_id in self._views and (
                self._bare(work, item.outline.corners_xy)
                or self._views[item.track_id].changed_frames >= self.settings.covered_frames
            ):  # no card where one lay: it was taken (else a hand is over it: wait)
                self._drop(item.track_id)
                self._detect_soon = True
        self._ignored = tuple(ignored)
        if not fresh:
            return
        reading_ids = {item.track_id for item, _ in fresh}
        context = [v.measured for k, v in self._views.items() if k not in reading_ids]
        readings = self.reader.classify(context + [m for _, m in fresh])[len(context) :]
        aside = []  # read again at the next detection: a card seen blurred may read then
        for (item, measured), reading in zip(fresh, readings):
            if item.net_place:
                measured, reading = self._surest_place(work, item.outline, measured, reading,
                                                       context)  # fmt: skip
            elif item.reason == "new" and worth_reading_again(
                item.outline, item.found_probability, reading.confidence, measured.margin
            ):  # read again on its variants, as ``CardReader.read_unsure_again`` does
                variant = self.reader.surest_variant(work.image, item.outline, reading.confidence)
                if variant is not None:
                    measured, reading = variant, self.reader.classify([*context, variant])[-1]
            if item.reason == "new" and (
                set_aside(item.found_probability, reading.confidence, measured.margin)
                or (item.net_place and not rescued(reading.confidence))
            ):
                aside.append(Ignored(measured.outline.corners_xy, UNSURE))
            elif item.reason == "new":
                corners = measured.outline.corners_xy
                track_id = self.tracker.add(corners, reading.probabilities, work.index)
                self.flow.seed(track_id, work.grey, corners * work.factor)
                inside = _inside(corners, work.image.shape)
                self._views[track_id] = _CardView(item.thumb, measured, inside)
            elif item.track_id in self.tracker.tracks:
                track = self.tracker.tracks[item.track_id]
                if item.reason == "check" and _identity(reading) != track.card:
                    continue  # another card, or something read as one: detection is to tell
                swapped = item.reason == "changed" and _identity(reading) != track.card
                if (
                    swapped
                    and track.card is not None
                    and not reading.confident
                    and self._views[item.track_id].changed_frames < self.settings.covered_frames
                ):  # an unsure other card may be this one under a hand: keep it, in doubt,
                    self._views[item.track_id].asked = False  # and ask detection again soon
                    continue
                self.tracker.vote(item.track_id, reading.probabilities, work.index, swapped)
                inside = _inside(track.corners_xy, work.image.shape)
                self._views[item.track_id] = _CardView(item.thumb, measured, inside)
        self._ignored += tuple(aside)

    def _drop(self, track_id: int) -> None:
        self._quiet = False
        self.tracker.drop(track_id)
        self._forget(track_id)

    def _forget(self, track_id: int) -> None:
        self._views.pop(track_id, None)
        self.flow.forget(track_id)


def live_record(
    result: LiveLayout, source: str, reveal: str = "all", profile: str | None = None
) -> dict:
    """The contract fields of ``detect --json`` for one analysed frame, plus frame and time,
    and the calibration profile read with (``profile``, None for none) as ``detect`` names it."""
    record = layout_record(result.layout, source, reveal)
    record.update(
        profile=profile,
        frame=result.frame,
        t=round(result.t, 3),
        verdict=result.verdict,
        message=result.message(reveal),
        track_ids=list(result.track_ids),
        unsettled=list(result.unsettled),
        steady_frames=result.steady_frames,
    )
    return record


def _identity(reading: CardReading) -> Card:
    """The most probable identity of one reading on its own."""
    return settle({a: p[None, :] for a, p in reading.probabilities.items()})[0]


def _area(corners: np.ndarray) -> float:
    return float(cv2.contourArea(np.asarray(corners, np.float32)))


def _plausible_move(before: np.ndarray, after: np.ndarray) -> bool:
    """A card seen from a moving camera keeps its size and shape from one frame to the next."""
    if not np.isfinite(after).all():
        return False
    ratio = _area(after) / max(_area(before), 1.0)
    sides = side_lengths(after) / np.maximum(side_lengths(before), 1.0)
    return 0.85 < ratio < 1.18 and bool((np.abs(sides - 1) < 0.2).all())


def _same_card(a: Track, b: Track) -> bool:
    """Two quads overlap much, or one's centre lies on the other: cards do not overlap so."""
    return (
        convex_iou(a.corners_xy, b.corners_xy) > 0.3
        or contains_point(a.corners_xy, tuple(b.corners_xy.mean(axis=0)))
        or contains_point(b.corners_xy, tuple(a.corners_xy.mean(axis=0)))
    )


def _outline(corners: np.ndarray, shape: tuple[int, ...], margin: float = 2.0) -> Outline:
    """A followed card as an outline, touching the border as detection would say."""
    height, width = shape[:2]
    corners = np.asarray(corners, np.float32).copy()
    return Outline(corners, touches_border(corners, (width, height), margin))


def _inside(corners: np.ndarray, shape: tuple[int, ...]) -> float:
    """The share of a quad's area that lies inside an image of this shape."""
    height, width = shape[:2]
    frame = np.float32([[0, 0], [width, 0], [width, height], [0, height]])
    area = convex_overlap(np.asarray(corners, np.float32), frame)
    return float(area) / max(_area(corners), 1.0)


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000
