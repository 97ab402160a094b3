"""Measuring the reader on labelled photos: as shipped, held out by source, card finding alone.

In: the labelled data folder (``app.paths.data_dir``), label files or the default ones, which
sources to measure, and the reader's choices. Out: one ``BoardResult`` per board
(``vision.learn.evaluate``; ``summarise`` and ``format_table`` make the table), or for card
finding one result per photo (``vision.learn.find_eval``). Nothing is printed here.

Leave-one-source-out reads each source with attribute models fitted without it (the honest
figure for a deck never seen in training); the card finder stays the shipped one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from setvision.app.readers import NO_PROFILE, ProfileChoice, make_reader
from setvision.solver.errors import SetvisionError
from setvision.vision.learn.card_free import CardFreeResult, card_free_result
from setvision.vision.learn.dataset import Board, load_boards
from setvision.vision.learn.evaluate import BoardResult, evaluate
from setvision.vision.pipeline import CardReader

OnDone = Callable[[str], None]


def _wanted(source: str, sources: Sequence[str] | None) -> bool:
    """Whether ``source`` contains one of ``sources`` (any case); all when none are given."""
    return not sources or any(s.lower() in source.lower() for s in sources)


def labelled_boards(
    data: Path,
    label_files: Sequence[str] = (),
    noisy: bool = False,
    sources: Sequence[str] | None = None,
) -> list[Board]:
    """The boards to measure: ``label_files``, else the shared labels, ours, the corrections
    and the bundled samples; unchecked noisy labels only with ``noisy``; only ``sources``."""
    files = [Path(f) for f in label_files] if label_files else None
    boards = load_boards(files, data_dir=data, include_samples=not label_files)
    boards = [b for b in boards if (noisy or b.kind != "noisy") and _wanted(b.source, sources)]
    if not boards:
        raise SetvisionError("no labelled boards to measure")
    return boards


def card_free_reading(
    data: Path, files: Sequence[str], reader: CardReader, on_done: OnDone | None = None
) -> list[CardFreeResult]:
    """The photos checked to show no card (``files`` in ``data``: ``card_free_files``), each
    read by ``reader``; a photo that cannot be read is recorded with its error."""
    from setvision.vision.image import load

    results = []
    for file in files:
        try:
            layout = reader.read_photo(load(str(data / file)))
        except Exception as error:  # noqa: BLE001 - a failure is a result to report
            results.append(CardFreeResult(file, 0, 0, "error", f"{type(error).__name__}: {error}"))
        else:
            results.append(card_free_result(file, layout))
        if on_done:
            on_done(file)
    return results


def evaluate_reader(
    boards: list[Board], reader: CardReader, on_done: OnDone | None = None
) -> list[BoardResult]:
    """Every board read by ``reader`` and scored against its labels."""
    return evaluate(boards, reader.read_photo, on_done)


def evaluate_held_out(
    boards: list[Board],
    data: Path,
    profile: ProfileChoice,
    model: str | None = None,
    auto: bool = True,
    jobs: int = 1,
    on_done: OnDone | None = None,
    seed: int | None = None,
) -> list[BoardResult]:
    """Each source's boards read by attribute models fitted on every other source (the
    tempering of ``model``, else of the shipped model, kept: it is fitted out of source);
    their forests drawn with ``seed``, else with the shipped settings' seed."""
    results = []
    sources = {b.source for b in boards}
    forest = None if seed is None else {"random_state": seed}
    readers = _readers_without_each(sources, data, jobs, profile, model, auto, forest)
    for source, reader in readers:
        results += evaluate_reader([b for b in boards if b.source == source], reader, on_done)
    return results


def _readers_without_each(
    sources: set[str],
    data: Path,
    jobs: int = 1,
    profile: ProfileChoice = NO_PROFILE,
    model: str | None = None,
    auto: bool = True,
    forest: dict | None = None,
):
    """(source, a reader whose attribute models are fitted without that source, ``forest``
    settings changed) for each of ``sources`` in name order; the tempering of ``model`` (else
    the shipped one) is kept."""
    from setvision.vision.learn.training import fit_without_source, training_samples
    from setvision.vision.read.classify import load_models

    samples = training_samples(data, jobs)
    tempering = load_models(model).tempering
    for source in sorted(sources):
        models = fit_without_source(samples, source, tempering, forest)
        yield source, make_reader(profile, auto=auto, models=models)


def cut_reading(
    boards: list[Board],
    reader: CardReader,
    hows: tuple[str, ...] = ("across", "along"),
    jobs: int = 1,
    on_done=None,
) -> list:
    """The boards' cards cut by the photo's edge and read by ``reader``
    (``vision.learn.cut_eval``); ``hows``: across the card's length, along it, at a corner."""
    from setvision.vision.learn.cut_eval import run_cut_reading

    return run_cut_reading(boards, reader, hows, jobs, on_done)


# ---------------------------------------------------------------- card finding alone


def finding_truths(data: Path, sources: Sequence[str] | None = None) -> list:
    """Photos with every card placed (outlines or centres), of ``sources`` only if given."""
    from setvision.vision.learn.find_training import finder_truths

    truths = [t for t in finder_truths(data) if _wanted(t.source, sources)]
    if not truths:
        raise SetvisionError("no photos with every card placed to measure")
    return truths


def _finder(name: str):
    """The finder to measure: None for the learned one (shipped), the previous hand-set one,
    ``read``: the cards the whole reader counts (unreadable and unsure outlines left out), or
    ``live``: the cards live analysis shows of the photo as a still camera frame."""
    from setvision.vision.learn.find_eval import previous_finder
    from setvision.vision.learn.vetting_eval import counted_cards, followed_cards

    return {"previous": previous_finder, "read": counted_cards, "live": followed_cards}.get(name)


def evaluate_finding(
    truths: list,
    finder: str = "learned",
    jobs: int = 1,
    on_done: OnDone | None = None,
    frame: tuple[int, int] | None = None,
) -> list:
    """Every photo's cards found by ``finder`` (see ``_finder``) and matched; with ``frame``
    (width, height), each photo letterboxed into a camera frame that size first."""
    from setvision.vision.learn.find_eval import InFrame, run_finding

    chosen = _finder(finder)
    return run_finding(truths, InFrame(frame, chosen) if frame else chosen, jobs, on_done)


def held_out_finding(data: Path, jobs: int = 1, on_done: OnDone | None = None, seed: int = 0):
    """Card finding with each source (and capture session) judged by a finder fitted without
    it, its forests drawn with ``seed``: ``train_finder``'s report, whose model is not written
    anywhere."""
    from setvision.vision.learn.find_training import train_finder

    return train_finder(data, jobs, on_done, held_out_seed=seed)


def held_out_reading(
    data: Path, truths: list, report, jobs: int = 1, on_done: OnDone | None = None
):
    """The held-out cards of ``report`` (``held_out_finding``'s) read as ``CardReader`` reads
    them, each source's by attribute models fitted without it (a deck never seen, as the
    finder's table never saw the table): (every source's photos, the new source's judged by
    a finder fitted without it)."""
    from setvision.vision.learn.vetting_eval import read_held_out

    by_file = {t.file: t for t in truths}
    sources = {r.source for r in report.held_out + report.unseen_source}
    readers = dict(_readers_without_each(sources, data, jobs))

    def read(results: list, outlines: list) -> list:
        photos = []
        for source in sorted({r.source for r in results}):
            rows = [k for k, r in enumerate(results) if r.source == source]
            photos += read_held_out([by_file[results[k].file] for k in rows],
                                    [outlines[k] for k in rows], readers[source], jobs,
                                    on_done)  # fmt: skip
        return photos

    return (
        read(report.held_out, report.held_out_outlines),
        read(report.unseen_source, report.unseen_outlines),
    )


@dataclass(frozen=True)
class ScaleRow:
    """How many photos of a source, and the shares giving the same cards at every size, when
    saved again as a JPEG, resized by a few percent, and turned a quarter and half round."""

    source: str
    photos: int
    same: float
    same_resaved: float
    same_near: float
    same_turned: float
    #: the share whose cards are each read as the same card at every size too (nan: not asked)
    same_read: float = float("nan")
    #: ... and re-saved, resized a little and turned as well (nan: not asked)
    read_every_way: float = float("nan")
    #: the share whose answer (the verdict and the sets) is the same at every size (nan: the
    #: reader gives none)
    same_answer: float = float("nan")
    #: ... and re-saved, resized a little and turned as well (nan: the reader gives none)
    answer_every_way: float = float("nan")


@dataclass(frozen=True)
class ScaleAgreement:
    """Per source (name order) and overall; ``differing``: the photos whose cards change any
    way, or (a reader's cards) are read as other cards or answered otherwise any way
    (``find_eval.ScaleCheck``)."""

    sources: tuple[ScaleRow, ...]
    overall: ScaleRow
    differing: tuple
    #: measuring what the reader counts: of the photos whose cards differ between sizes, how
    #: many, and how many get the same outlines from the finder at every size (None: the
    #: finder itself measured)
    decided_by_reader: tuple[int, int] | None = None


def scale_agreement(
    truths: list, finder: str = "learned", jobs: int = 1, on_done: OnDone | None = None
) -> ScaleAgreement:
    """Each photo read at long sides 800, 1200 and 1600, saved again as a JPEG, resized by a
    few percent, and turned a quarter and half round: does it give the same cards?"""
    from setvision.vision.learn.find_eval import decided_by_the_reader, run_scale_agreement
    from setvision.vision.learn.vetting_eval import counted_readings, followed_readings

    reads = finder in ("read", "live")  # cards read from the learned finder's outlines
    reader = {"read": counted_readings, "live": followed_readings}.get(finder)
    checks = run_scale_agreement(truths, _finder(finder), jobs, on_done, reads, reader)

    def share(rows: list, name: str) -> float:
        asked = [getattr(r, name) for r in rows if getattr(r, name) is not None]
        return float(np.mean(asked)) if asked else np.nan

    def row(source: str, rows: list) -> ScaleRow:
        names = ("same", "same_resaved", "same_near", "same_turned", "same_read",
                 "read_every_way", "same_answer", "answer_every_way")  # fmt: skip
        return ScaleRow(source, len(rows), *(share(rows, name) for name in names))

    by_source: dict[str, list] = {}
    for check in checks:
        by_source.setdefault(check.source, []).append(check)
    sources = tuple(row(source, rows) for source, rows in sorted(by_source.items()))
    differing = tuple(
        c
        for c in checks
        if not (c.same and c.same_resaved and c.same_near and c.same_turned)
        or c.read_every_way is False
        or c.answer_every_way is False
    )
    decided = decided_by_the_reader(checks) if reads else None
    return ScaleAgreement(sources, row("all", checks), differing, decided)
