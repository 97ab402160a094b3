"""What each kind of calibration buys, per source of labelled photos (`eval --calibration`).

For every source with two or more labelled boards that have positions, one explicit profile is
fitted on the first board (in name order) with ``FIT_MIN_CARDS`` or more cards, its labels
serving as the known identities, and every other board of the source is read four ways: the
general model alone, with per-photo calibration, with the profile, and with both (what
``--profile NAME`` gives by default). The models given should never have seen the source.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from setvision.calibration.auto import calibrate_layout
from setvision.calibration.deck import CalibrationError, KnownPhoto, fit_profile
from setvision.calibration.known import MeasuredPhoto, measure_photo
from setvision.calibration.profiles import chain
from setvision.vision.image import load
from setvision.vision.learn.dataset import Board
from setvision.vision.learn.evaluate import score_board
from setvision.vision.learn.matching import match_by_position
from setvision.vision.pipeline import CardReader
from setvision.vision.read.classify import AttributeModels

COLUMNS = ("general", "auto", "profile", "profile+auto")
FIT_MIN_CARDS = 9
MIN_BOARDS = 2


@dataclass
class SourceResult:
    """Card exact per way of reading, on the boards of one source other than the fitted one."""

    source: str
    fitted_on: str | None = None
    boards: int = 0
    cards: int = 0
    found: int = 0  # cards found at all: the ceiling of card exact
    exact: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COLUMNS, 0))
    note: str = ""

    def rate(self, column: str) -> float | None:
        if self.cards == 0 or (column.startswith("profile") and self.fitted_on is None):
            return None
        return self.exact[column] / self.cards


def sources_to_measure(boards: list[Board]) -> dict[str, list[Board]]:
    """Boards with positions per source, in name order, for sources with ``MIN_BOARDS``."""
    grouped: dict[str, list[Board]] = {}
    for board in sorted(boards, key=lambda b: b.file):
        if board.has_positions:
            grouped.setdefault(board.source, []).append(board)
    return {s: b for s, b in sorted(grouped.items()) if len(b) >= MIN_BOARDS}


def known_photo(board: Board, measured: MeasuredPhoto) -> KnownPhoto:
    """The board's measured cards that its labels name (by position), with those labels."""
    pairs = sorted(match_by_position(measured.quads, [c.centre for c in board.cards]),
                   key=lambda pair: pair[1])  # fmt: skip
    return KnownPhoto(
        board.file,
        [measured.features[j] for _, j in pairs],
        [board.cards[i].card for i, _ in pairs],
    )


def measure_source(
    source: str,
    boards: list[Board],
    models: AttributeModels,
    date: str,
    progress: Callable[[str], None] | None = None,
) -> SourceResult:
    """Read the boards of one source the four ways, with a profile fitted on one of them."""
    result = SourceResult(source)
    general = CardReader(models)
    measured = {}
    for board in boards:
        measured[board.file] = measure_photo(general, load(board.path))
        if progress:
            progress(board.file)
    fit = next((b for b in boards if len(b.cards) >= FIT_MIN_CARDS), None)
    profile = None
    if fit is None:
        result.note = f"no board with {FIT_MIN_CARDS} or more cards to fit a profile on"
    else:
        try:
            profile = fit_profile(source, [known_photo(fit, measured[fit.file])], date, "")
            result.fitted_on = fit.file
        except CalibrationError as error:
            result.note = f"no profile from {fit.file}: {error}"
    readers = {
        "general": general,
        "auto": CardReader(models, calibrate_layout),
        "profile": CardReader(models, profile),
        "profile+auto": CardReader(models, chain(profile, calibrate_layout)),
    }
    for board in boards:
        if fit is not None and board.file == fit.file:
            continue
        result.boards += 1
        result.cards += len(board.cards)
        for column, reader in readers.items():
            scored = score_board(board, measured[board.file].read(reader))
            result.exact[column] += scored.exact
        result.found += scored.found
    return result


def format_results(results: list[SourceResult]) -> str:
    """A fixed-width table: card exact per source and way of reading, then all sources."""
    total = SourceResult("all (where a profile was fitted)")
    for r in results:
        if r.fitted_on is not None:
            total.boards += r.boards
            total.cards += r.cards
            total.found += r.found
            for column in COLUMNS:
                total.exact[column] += r.exact[column]
    total.fitted_on = "" if total.cards else None
    width = max(36, *(len(r.source) for r in results))
    heads = f"{'source':<{width}} {'boards':>6} {'cards':>5} {'found':>6} "
    lines = [heads + " ".join(f"{c:>12}" for c in COLUMNS)]
    for r in [*results, total]:
        found = f"{r.found / r.cards:.3f}" if r.cards else "-"
        cells = [f"{'-' if r.rate(c) is None else f'{r.rate(c):.3f}':>12}" for c in COLUMNS]
        lines.append(
            f"{r.source:<{width}} {r.boards:>6} {r.cards:>5} {found:>6} " + " ".join(cells)
        )
    return "\n".join(lines)
