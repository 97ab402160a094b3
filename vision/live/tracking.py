"""Follow cards from frame to frame: one track per physical card, its readings voted over time.

The tracker sees no pixels. It is given card outlines (from detection or from motion
tracking) and, now and then, a fresh reading of a card's attribute probabilities. It keeps
identities steady by averaging each card's recent readings and by favouring the identity
already shown; it numbers cards in reading order without renumbering for small jitters; and
it counts how long the whole layout has been read confidently, so that "no set: add three
cards" is only said once the table has been read the same way for a moment.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

import cv2
import numpy as np
from scipy.optimize import linear_sum_assignment
from setvision.solver import ATTRIBUTES, Card
from setvision.vision.geometry import convex_iou
from setvision.vision.layout import CardReading, Ignored, Layout, verdict_message
from setvision.vision.order import reading_order
from setvision.vision.read.settle import settle

#: Readings averaged per card: enough to outvote a blurred frame, few enough to follow changes.
VOTES = 8
#: Log-probability bonus for the identity already shown: a rival must be four times as likely.
STICKINESS = math.log(4.0)
#: A new card is shown once read this many times, or at once if its first reading is this sure:
#: a first glimpse is often blurred, and a card that comes and goes would make sets flicker.
SHOW_AFTER_VOTES = 2
SURE_AT_ONCE = 0.95
#: Analysed frames a new reading order must persist before cards are renumbered.
RENUMBER_AFTER = 10
#: Analysed frames the layout must be read confidently and unchanged before "no set" is said.
STEADY_AFTER = 8
#: Detection rounds in a row a card may go unconfirmed before its track is dropped.
MAX_MISSES = 3
#: Least overlap (intersection over union) for an outline to be the same card as a track.
MIN_IOU = 0.3


@dataclass
class Track:
    """One physical card followed over frames.

    ``corners_xy`` is where it is now; ``read_corners`` where it was at its latest reading;
    ``votes`` holds recent readings (attribute -> three probabilities); ``settled`` is False
    while its look has changed (covered, taken, swapped) and a fresh reading is awaited.
    """

    id: int
    corners_xy: np.ndarray
    read_corners: np.ndarray
    last_read: int
    votes: deque = field(default_factory=lambda: deque(maxlen=VOTES))
    misses: int = 0
    settled: bool = True
    card: Card | None = None

    @property
    def ready(self) -> bool:
        """Read often enough, or surely enough, to be shown."""
        if len(self.votes) >= SHOW_AFTER_VOTES:
            return True
        voted = self.voted() if self.votes else None
        return (
            voted is not None and float(np.prod([v.max() for v in voted.values()])) >= SURE_AT_ONCE
        )

    def voted(self) -> dict[str, np.ndarray]:
        """The mean of the recent readings, per attribute."""
        voted = {}
        for attribute in ATTRIBUTES:
            mean = np.mean([vote[attribute] for vote in self.votes], axis=0)
            voted[attribute] = mean / max(float(mean.sum()), 1e-12)
        return voted


@dataclass(frozen=True)
class LiveLayout:
    """The table as tracked at one analysed frame.

    ``layout`` numbers the cards for display (voted readings, current outlines);
    ``track_ids`` gives each card's track; ``unsettled`` lists card ids whose look changed
    and is being re-read; ``steady_frames`` counts analysed frames in a row read confidently
    and unchanged.
    """

    frame: int
    t: float
    layout: Layout
    track_ids: tuple[int, ...] = ()
    unsettled: tuple[int, ...] = ()
    steady_frames: int = 0
    steady_after: int = STEADY_AFTER

    @property
    def steady(self) -> bool:
        return self.steady_frames >= self.steady_after

    @property
    def verdict(self) -> str:
        """As ``Layout.verdict``, but ``no_set`` only once the table has been steady a moment."""
        verdict = self.layout.verdict
        if verdict == "no_set" and (self.unsettled or not self.steady):
            return "uncertain"
        return verdict

    def message(self, reveal: str = "all") -> str:
        """The line a player reads; while not steady, what is still being checked."""
        layout = self.layout
        if layout.verdict == "no_set" and self.verdict == "uncertain":
            n = len(layout.cards)
            if self.unsettled:
                return f"no set so far among {n} cards; checking {self._unsettled_text()}"
            return f"no set so far among {n} cards; making sure (hold the camera still)"
        message = verdict_message(layout, reveal)
        if self.unsettled and layout.verdict != "no_cards":
            message += f"; checking {self._unsettled_text()}"
        return message

    def _unsettled_text(self) -> str:
        ids = ", ".join(str(i) for i in self.unsettled)
        plural = "s" if len(self.unsettled) > 1 else ""
        return f"card{plural} {ids} (changed)"

    def summary(self) -> tuple:
        """What a player would notice changing: verdict, cards read, sets, cards in doubt."""
        cards = tuple(str(card.card) for card in self.layout.cards)
        return (self.verdict, cards, tuple(self.layout.sets), tuple(self.layout.uncertain))


class Tracker:
    """Tracks, their votes, the card numbering and the steadiness count of one video."""

    def __init__(
        self,
        votes: int = VOTES,
        stickiness: float = STICKINESS,
        renumber_after: int = RENUMBER_AFTER,
        steady_after: int = STEADY_AFTER,
        max_misses: int = MAX_MISSES,
        min_iou: float = MIN_IOU,
    ):
        if votes < 1:
            raise ValueError(f"votes must be at least 1, got {votes}")
        self.votes = votes
        self.stickiness = stickiness
        self.renumber_after = renumber_after
        self.steady_after = steady_after
        self.max_misses = max_misses
        self.min_iou = min_iou
        self.tracks: dict[int, Track] = {}
        self._next_id = 1
        self._order: list[int] = []
        self._pending: list[int] | None = None
        self._pending_count = 0
        self._steady = 0
        self._last_key: tuple | None = None

    @property
    def started(self) -> int:
        """How many tracks were ever started."""
        return self._next_id - 1

    # ------------------------------------------------------------ changes to the tracks

    def match(self, quads: Iterable[np.ndarray]) -> list[int | None]:
        """The track each outline belongs to, one outline per track.

        Outlines overlapping a track by ``min_iou`` pair first (greatest overlap); then an
        outline whose centre lies within half a card of a track still unpaired pairs with it
        (the track had drifted off its card).
        """
        quads = [np.asarray(q, dtype=np.float32).reshape(4, 2) for q in quads]
        ids = list(self.tracks)
        result: list[int | None] = [None] * len(quads)
        if not quads or not ids:
            return result
        iou = np.array([[convex_iou(q, self.tracks[i].corners_xy) for i in ids] for q in quads])
        rows, columns = linear_sum_assignment(-iou)
        for row, column in zip(rows, columns):
            if iou[row, column] >= self.min_iou:
                result[row] = ids[column]
        free_rows = [r for r in range(len(quads)) if result[r] is None]
        free_ids = [i for i in ids if i not in result]
        if not free_rows or not free_ids:
            return result
        distance = np.array(
            [[_centre_distance(quads[r], self.tracks[i].corners_xy) for i in free_ids]
             for r in free_rows]
        )  # fmt: skip
        rows, columns = linear_sum_assignment(distance)
        for row, column in zip(rows, columns):
            if distance[row, column] < 0.5:
                result[free_rows[row]] = free_ids[column]
        return result

    def add(self, corners_xy: np.ndarray, probabilities: dict[str, np.ndarray], frame: int) -> int:
        """A new track for a card just read; returns its id."""
        track_id = self._next_id
        self._next_id += 1
        corners = np.asarray(corners_xy, dtype=np.float32).reshape(4, 2)
        track = Track(track_id, corners, corners.copy(), frame, deque(maxlen=self.votes))
        track.votes.append(_as_vote(probabilities))
        self.tracks[track_id] = track
        return track_id

    def move(self, track_id: int, corners_xy: np.ndarray) -> None:
        self.tracks[track_id].corners_xy = np.asarray(corners_xy, dtype=np.float32).reshape(4, 2)

    def vote(
        self, track_id: int, probabilities: dict[str, np.ndarray], frame: int, fresh: bool = False
    ) -> None:
        """Add a reading; ``fresh`` forgets the earlier ones (the card was swapped)."""
        track = self.tracks[track_id]
        if fresh:
            track.votes.clear()
            track.card = None
        track.votes.append(_as_vote(probabilities))
        track.last_read = frame
        track.read_corners = track.corners_xy.copy()
        track.settled = True

    def unsettle(self, track_id: int) -> None:
        """The card's look changed: its reading is in doubt until it is re-read."""
        self.tracks[track_id].settled = False

    def resettle(self, track_id: int) -> None:
        """The card looks as it did when read (a hand passed over it)."""
        self.tracks[track_id].settled = True

    def drop(self, track_id: int) -> None:
        self.tracks.pop(track_id, None)

    def detected(self, confirmed: Iterable[int]) -> list[int]:
        """After a detection round: reset the misses of confirmed tracks, drop long-missed ones.

        Returns the ids dropped.
        """
        confirmed = set(confirmed)
        dropped = []
        for track_id, track in list(self.tracks.items()):
            track.misses = 0 if track_id in confirmed else track.misses + 1
            if track.misses >= self.max_misses:
                dropped.append(track_id)
                self.drop(track_id)
        return dropped

    # ------------------------------------------------------------ the layout shown

    def snapshot(
        self,
        frame: int,
        t: float,
        image_size: tuple[int, int],
        ignored: tuple[Ignored, ...] = (),
        timings_ms: dict[str, float] | None = None,
        possible: tuple[np.ndarray, ...] = (),
    ) -> LiveLayout:
        """The table now: voted, jointly settled identities, numbered stably; ``possible``:
        places where a card may be missed (``Layout.possible``)."""
        shown = [track for track in self.tracks.values() if track.ready]
        voted = [track.voted() for track in shown]
        if shown:
            probabilities = {a: np.array([v[a] for v in voted]) for a in ATTRIBUTES}
            prior = np.zeros((len(shown), 81))
            for row, track in enumerate(shown):
                if track.card is not None:
                    prior[row, track.card.index] = self.stickiness
            for track, card in zip(shown, settle(probabilities, prior)):
                track.card = card
        by_id = {track.id: (track, v) for track, v in zip(shown, voted)}
        order = self._numbering(shown)
        readings = tuple(
            CardReading(by_id[i][0].corners_xy.copy(), by_id[i][1], by_id[i][0].card) for i in order
        )
        layout = Layout(tuple(image_size), readings, tuple(ignored), dict(timings_ms or {}),
                        tuple(possible))  # fmt: skip
        unsettled = tuple(n for n, i in enumerate(order, 1) if not by_id[i][0].settled)
        steady = self._count_steady(layout, order, unsettled)
        return LiveLayout(frame, t, layout, tuple(order), unsettled, steady, self.steady_after)

    def update(self, layout: Layout, frame: int, t: float = 0.0) -> LiveLayout:
        """Take one fully read frame: match its cards to tracks, vote, and snapshot.

        Cards that match no track start one; tracks missed ``max_misses`` frames are dropped.
        """
        matches = self.match(card.corners_xy for card in layout.cards)
        confirmed = []
        for card, track_id in zip(layout.cards, matches):
            if track_id is None:
                confirmed.append(self.add(card.corners_xy, card.probabilities, frame))
            else:
                self.move(track_id, card.corners_xy)
                self.vote(track_id, card.probabilities, frame)
                confirmed.append(track_id)
        self.detected(confirmed)
        return self.snapshot(frame, t, layout.image_size, layout.ignored, layout.timings_ms,
                             layout.possible)  # fmt: skip

    def _numbering(self, shown: list[Track]) -> list[int]:
        """Track ids in display order: reading order, adopted only when it persists."""
        ids = [track.id for track in shown]
        natural = [ids[i] for i in reading_order([track.corners_xy for track in shown])]
        if set(natural) != set(self._order):
            self._order, self._pending = natural, None
        elif natural != self._order:
            if natural == self._pending:
                self._pending_count += 1
            else:
                self._pending, self._pending_count = natural, 1
            if self._pending_count >= self.renumber_after:
                self._order, self._pending = natural, None
        else:
            self._pending = None
        return list(self._order)

    def _count_steady(self, layout: Layout, order: list[int], unsettled: tuple) -> int:
        key = tuple((i, card.card) for i, card in zip(order, layout.cards))
        confident = bool(layout.cards) and not (
            layout.uncertain or layout.layout_doubts or unsettled
        )
        if not confident:
            self._steady = 0
        elif key == self._last_key:
            self._steady += 1
        else:
            self._steady = 1
        self._last_key = key
        return self._steady


def _centre_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Distance between two quads' centres, in units of the second quad's size."""
    size = max(float(np.sqrt(cv2.contourArea(b))), 1.0)
    return float(np.linalg.norm(a.mean(axis=0) - b.mean(axis=0))) / size


def _as_vote(probabilities: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    vote = {}
    for attribute in ATTRIBUTES:
        p = np.asarray(probabilities[attribute], dtype=np.float64)
        if p.shape != (3,):
            raise ValueError(f"probabilities[{attribute!r}] must have shape (3,), got {p.shape}")
        vote[attribute] = p
    return vote
