"""What the reader makes of the cards a held-out finder found: counted, set aside, unreadable.

The finder's figures count every outline it returns. A user sees fewer: the reader leaves out
outlines it cannot read (no symbols, cut by the border) and sets aside those found unsurely and
read with little confidence (``vision.read.vetting``). Here each held-out photo's outlines are
read as ``CardReader.read`` reads them, and scored again at every pair of vetting levels tried.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
from setvision.vision.find.finder import place_outline, unexplained_cards
from setvision.vision.find.fit import snap_sides
from setvision.vision.layout import Layout
from setvision.vision.learn.find_eval import (
    FindResult,
    FindTruth,
    PhotoReading,
    _map_photos,
    score_found,
)
from setvision.vision.learn.find_training import HeldOutOutlines
from setvision.vision.read.rescue import (
    RESCUE_CONFIDENCE,
    RESCUE_LEVELS,
    best_reading,
    still_possible,
)
from setvision.vision.read.vetting import (
    FINDER_UNSURE,
    READER_UNSURE,
    TEXTURED_MARGIN,
    set_aside,
)

#: The vetting levels tried: (finder unsure below, reader unsure below); (0, 0) sets none aside.
VETTING_LEVELS = tuple(
    (finder, reader) for finder in (0.8, 0.9, 0.95, 1.01) for reader in (0.2, 0.3, 0.4, 0.5)
)
NO_VETTING = (0.0, 0.0)
#: The textured-margin levels tried at the shipped vetting levels (infinity: none set aside so).
TEXTURED_LEVELS = (2.0, 2.5, 3.0, 3.5, 4.0, 5.0, float("inf"))
#: An outline this close to the photo's edge (pixels) may reach past it.
BORDER_PX = 2.0


@dataclass(frozen=True)
class ReadPhoto:
    """One photo's outlines as read: per vetting levels, (cards counted, false cards counted)."""

    file: str
    source: str
    group: str
    labelled: int
    counted: dict[tuple[float, float], tuple[int, int]]
    error: str | None = None
    #: at the shipped vetting levels, by the confidence a place the net sees needs to be
    #: counted (``RESCUE_LEVELS``): (cards counted, false cards counted)
    rescued: dict[float, tuple[int, int]] = field(default_factory=dict)
    #: the answer at the shipped levels: its verdict (``Layout.verdict``), and whether it says
    #: that a card may be missing or is unsure (a layout doubt or an uncertain card)
    verdict: str = ""
    doubted: bool = False
    #: how many places the answer names where a card may be missed (``Layout.possible``)
    places: int = 0
    #: at the shipped vetting levels, by the margin texture above which an outline read unsurely
    #: is set aside (``TEXTURED_LEVELS``): (cards counted, false cards counted)
    textured: dict[float, tuple[int, int]] = field(default_factory=dict)

    @property
    def missed_unsaid(self) -> bool:
        """Whether, at the shipped levels, a labelled card is missed and nothing in the answer
        says so: were the cards read without a set, "no set" would be said wrongly."""
        found, _ = self.counted.get((FINDER_UNSURE, READER_UNSURE), (0, 0))
        return self.error is None and found < self.labelled and not self.doubted

    def result(self, levels: tuple[float, float]) -> FindResult:
        """The photo scored on the outlines counted as cards at ``levels``."""
        return self._scored(self.counted.get(levels, (0, 0)))

    def result_rescued(self, level: float) -> FindResult:
        """The photo scored with the net's places counted from read confidence ``level``."""
        return self._scored(self.rescued.get(level, (0, 0)))

    def result_textured(self, level: float) -> FindResult:
        """The photo scored with outlines read unsurely set aside from margin texture ``level``."""
        return self._scored(self.textured.get(level, (0, 0)))

    def _scored(self, counts: tuple[int, int]) -> FindResult:
        found, false = counts
        return FindResult(self.file, self.source, self.group, self.labelled, found,
                          found + false, false, 0.0, self.error)  # fmt: skip


_READER = None


def _reader():
    """One reader per process (the shipped attribute models, colours adapted to each photo)."""
    global _READER
    if _READER is None:
        from setvision.app.readers import make_reader

        _READER = make_reader()
    return _READER


def counted_cards(image: np.ndarray) -> list[np.ndarray]:
    """The outlines of the cards ``CardReader.read`` counts in ``image`` (a finder for the
    finding measures: what a user is shown as cards)."""
    return [corners for corners, _ in counted_readings(image).cards]


def shown_answer(layout: Layout) -> str:
    """The answer a user is shown for ``layout``: its verdict, and each set as the three cards
    it holds (not their numbers, which depend on where each card lies)."""
    sets = sorted(" + ".join(sorted(str(layout.cards[k - 1].card) for k in found))
                  for found in layout.sets)  # fmt: skip
    return "; ".join([layout.verdict, *sets])


def _read_as_shown(layout: Layout) -> PhotoReading:
    return PhotoReading([(c.corners_xy, str(c.card)) for c in layout.cards], shown_answer(layout))


def counted_readings(image: np.ndarray) -> PhotoReading:
    """The cards ``CardReader.read`` counts in ``image``, each as its outline and what it was
    read as, and the answer shown for them (a reader for the scale check: what a user is
    shown)."""
    return _read_as_shown(_reader().read(image))


#: How many times the live analyser is shown a photo as a still camera frame before its cards
#: are counted: a new card shows once read twice, and the first detections follow each other
#: closely (``vision.live.session``).
STILL_FRAMES = 12
#: The still camera's frame rate (frames per second) for the frames' clock.
STILL_FPS = 30.0


def followed_readings(image: np.ndarray) -> PhotoReading:
    """The cards ``setvision live`` shows after seeing ``image`` as a still camera frame
    ``STILL_FRAMES`` times, each as its outline and what it was read as (a reader for the
    scale check, as ``counted_readings`` is for a photo's reading)."""
    from setvision.vision.live.session import LiveAnalyser
    from setvision.vision.live.source import Frame

    analyser = LiveAnalyser(_reader())
    frames = [analyser.analyse(Frame(k, k / STILL_FPS, image)) for k in range(STILL_FRAMES)]
    return _read_as_shown(frames[-1].layout)


def followed_cards(image: np.ndarray) -> list[np.ndarray]:
    """The outlines of the cards ``followed_readings`` gives (a finder for the finding
    measures: live against a photo's reading, ``counted_cards``)."""
    return [corners for corners, _ in followed_readings(image).cards]


def read_found(
    truth: FindTruth,
    image: np.ndarray,
    scale: float,
    outlines: HeldOutOutlines,
    reader,
    warnings: tuple[str, ...] = (),
) -> ReadPhoto:
    """Read a photo's found ``outlines`` (``image`` is the photo at 1/``scale`` of the labels'
    pixels; ``warnings`` from decoding it) and score what is counted at every vetting level."""
    from setvision.vision.pipeline import MeasuredCard

    size = (image.shape[1], image.shape[0])
    quads, cards, ignored = [], [], []
    for quad, probability in zip(outlines.quads, outlines.probabilities):
        corners = np.asarray(quad, np.float32) / np.float32(scale)
        measured = reader.measure_found(image, place_outline(corners, size, BORDER_PX))
        if isinstance(measured, MeasuredCard):
            quads.append(quad)
            cards.append(replace(measured, found_probability=probability))
        else:
            ignored.append(measured)
    again = reader.read_unsure_again(image, cards)  # as ``CardReader.read`` does
    quads = [q if a is c else a.outline.corners_xy * np.float32(scale)
             for q, c, a in zip(quads, cards, again)]  # fmt: skip
    cards = again
    levels = {*RESCUE_LEVELS, RESCUE_CONFIDENCE}
    places = []  # per place, its readings alone (confidence, measurement): outline, variants
    if outlines.net_places:
        shown = np.array(outlines.net_places, np.float32) / np.float32(scale)
        retry_below = max(level for level in levels if level <= 1.0)
        for quad in snap_sides(image, shown, outlines.snap_reach / scale):
            readings = reader.read_place(image, place_outline(quad, size, BORDER_PX), retry_below)
            if readings:
                places.append(readings)

    def read_with(level: float) -> tuple[list, list[float], list[float], list]:
        taken = []  # (quad in the labels' pixels, measurement)
        for readings in places:
            best = best_reading([confidence for confidence, _ in readings], level)
            if best is not None:  # the finder gave it no probability, as ``CardReader.rescue``
                card = replace(readings[best][1], found_probability=0.0)
                taken.append((card.outline.corners_xy * np.float32(scale), card))
        every = cards + [card for _, card in taken]
        confidences = [r.confidence for r in reader.classify(every)] if every else []
        return (quads + [quad for quad, _ in taken], [m.found_probability for m in every],
                confidences, every)  # fmt: skip

    def counted_at(
        read, finder_unsure: float, reader_unsure: float, textured: float = TEXTURED_MARGIN
    ) -> tuple[int, int]:
        if (finder_unsure, reader_unsure) == NO_VETTING:
            textured = float("inf")
        kept = [
            q
            for q, p, c, m in zip(*read)
            if not set_aside(p, c, m.margin, finder_unsure, reader_unsure, textured)
        ]
        return score_found(truth, kept)

    by_level = {level: read_with(level) for level in levels}
    shipped = by_level[RESCUE_CONFIDENCE]
    counted = {levels: counted_at(shipped, *levels) for levels in (NO_VETTING, *VETTING_LEVELS)}
    vetting = (FINDER_UNSURE, READER_UNSURE)
    rescued_counts = {level: counted_at(read, *vetting) for level, read in by_level.items()}
    textured = {level: counted_at(shipped, *vetting, level) for level in TEXTURED_LEVELS}
    taken = shipped[3][len(cards) :]  # the places read as cards, after the outlines' cards
    possible = np.array(outlines.possible, np.float32).reshape(-1, 4, 2) / np.float32(scale)
    possible = unexplained_cards(possible, [t.outline.corners_xy for t in taken])
    shown = [np.asarray(q, np.float32) / np.float32(scale) for q in quads]
    shown += [t.outline.corners_xy for t in taken] + [i.corners_xy for i in ignored]
    possible = still_possible(image, possible, shown)  # as ``CardReader.measure`` does
    readings, unsure = reader.classify_vetted(shipped[3])  # as ``CardReader.read`` answers
    layout = Layout(size, tuple(readings), tuple(ignored + unsure), {}, tuple(possible), warnings)
    return ReadPhoto(truth.file, truth.source, truth.group, truth.labelled, counted,
                     rescued=rescued_counts, verdict=layout.verdict,
                     doubted=bool(layout.uncertain or layout.layout_doubts),
                     places=len(layout.possible), textured=textured)  # fmt: skip


#: The reader of ``read_held_out``'s photos (set before its worker processes are forked).
_HELD_OUT_READER = None


def _job(item: tuple[FindTruth, HeldOutOutlines | None]) -> ReadPhoto:
    from setvision.vision.image import load

    truth, outlines = item
    try:
        photo = load(truth.path)
    except Exception as error:  # a photo that cannot be read is reported, not fatal
        return ReadPhoto(truth.file, truth.source, truth.group, truth.labelled, {}, str(error))
    if outlines is None:
        outlines = HeldOutOutlines(truth.file, (), ())
    return read_found(truth, photo.image, photo.scale, outlines, _HELD_OUT_READER, photo.warnings)


def read_held_out(
    truths: list[FindTruth],
    outlines: list[HeldOutOutlines | None],
    reader,
    jobs: int = 1,
    progress: Callable[[str], None] | None = None,
) -> list[ReadPhoto]:
    """Every photo's held-out outlines (in the order of ``truths``) read by ``reader``."""
    global _HELD_OUT_READER
    _HELD_OUT_READER = reader
    return _map_photos(_job, list(zip(truths, outlines)), jobs, progress, lambda r: r.file)


def vetting_options(photos: list[ReadPhoto]) -> list[tuple[float, float, float, float, float]]:
    """(finder unsure, reader unsure, share of photos with every card and nothing extra,
    recall, precision) at each vetting levels tried, no vetting first."""
    options = []
    labelled = max(1, sum(p.labelled for p in photos))
    for levels in (NO_VETTING, *VETTING_LEVELS):
        results = [p.result(levels) for p in photos]
        found = sum(r.found for r in results)
        counted = sum(r.detections for r in results)
        complete = float(np.mean([r.complete for r in results])) if results else 0.0
        options.append((*levels, complete, found / labelled, found / counted if counted else 1.0))
    return options


def unsaid_line(photos: list[ReadPhoto]) -> str:
    """How many ``photos`` miss a card as read, how many of those say nothing of it
    (``ReadPhoto.missed_unsaid``) and answer "no set"; and the price of the places named: how
    many photos read complete name one all the same."""
    shipped = (FINDER_UNSURE, READER_UNSURE)
    missed = [p for p in photos if p.error is None and p.counted[shipped][0] < p.labelled]
    unsaid = [p for p in missed if p.missed_unsaid]
    no_set = sum(p.verdict == "no_set" for p in unsaid)
    complete = [p for p in photos if p.error is None and p.result(shipped).complete]
    alarms = sum(p.places > 0 for p in complete)
    return (f"{len(unsaid)} of the {len(missed)} photos missing a card say nothing of it; "
            f'{no_set} of them answer "no set"; {alarms} of the {len(complete)} photos read '
            "complete name a place where a card may be missed all the same")  # fmt: skip
