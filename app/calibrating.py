"""Calibration: fit a deck's profile from photos of known cards, and measure what it buys.

In (``calibrate``): a profile name, photos, and each photo's cards in the order ``detect``
numbers them, given as text or confirmed by a ``confirm`` callback (the command line asks the
user). Out: the fitted ``DeckProfile``, stored under the user's config folder.

In (``measure_calibration``): labelled boards. Out: per source, card exact read four ways
(general model, per-photo calibration, a profile fitted on one of its boards, both), the
models fitted without the source (``calibration.measure``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from setvision.app.readers import NO_PROFILE, make_reader
from setvision.calibration.deck import (
    DeckProfile,
    KnownPhoto,
    check_found,
    check_given,
    fit_profile,
)
from setvision.calibration.known import measure_photo
from setvision.calibration.measure import SourceResult, measure_source, sources_to_measure
from setvision.calibration.profiles import model_fingerprint, profile_path, save_profile
from setvision.solver import Card, parse_cards
from setvision.solver.errors import SetvisionError
from setvision.vision.image import Photo, load
from setvision.vision.layout import Layout
from setvision.vision.learn.dataset import Board

#: Asks which cards a photo shows, given its path, the photo and the general model's reading.
Confirm = Callable[[str, Photo, Layout], list[Card]]


@dataclass(frozen=True)
class Calibrated:
    """A profile fitted and where it was written."""

    profile: DeckProfile
    path: Path


def refuse_existing(name: str, replace: bool) -> None:
    """Stop before any photo is read when the profile exists and may not be replaced."""
    if profile_path(name).exists() and not replace:
        raise SetvisionError(f"profile {name!r} exists: add --force to replace it")


def calibrate(
    name: str,
    paths: Sequence[str],
    cards: Sequence[str] | None,
    confirm: Confirm | None = None,
    model: str | None = None,
    replace: bool = False,
) -> Calibrated:
    """Fit and save the profile ``name`` from ``paths``.

    ``cards`` holds each photo's cards as ``CARD,CARD,...`` text (one per photo, in order);
    without it ``confirm`` is asked for each photo. Photos are read by the general model with
    per-photo calibration and no profile: a profile is fitted against what it refines.
    """
    if cards is None and confirm is None:
        raise ValueError("give the cards or a way to confirm them")
    reader = make_reader(NO_PROFILE, model)
    known = []
    for index, path in enumerate(paths):
        photo = load(path)
        measured = measure_photo(reader, photo)
        check_found(path, len(measured.cards))
        if cards is not None:
            named = parse_cards([cards[index]])
        else:
            named = confirm(path, photo, measured.read(reader))
        check_given(path, len(measured.cards), named)
        known.append(KnownPhoto(os.path.abspath(path), measured.features, named))
    date = datetime.now(timezone.utc).isoformat(timespec="seconds")
    profile = fit_profile(name, known, date, model_fingerprint(reader.models))
    return Calibrated(profile, save_profile(profile, replace=replace))


def calibration_sources(boards: list[Board]) -> dict[str, list[Board]]:
    """The sources whose boards can measure calibration (two or more with card positions)."""
    sources = sources_to_measure(boards)
    if not sources:
        raise SetvisionError("no source has two labelled boards with positions to measure")
    return sources


def measure_calibration(
    sources: dict[str, list[Board]],
    data: Path,
    jobs: int = 1,
    model: str | None = None,
    on_done: Callable[[str], None] | None = None,
) -> list[SourceResult]:
    """Each source's boards read the four ways, by models fitted without the source (the
    tempering of ``model``, else of the shipped model, kept: it is fitted out of source)."""
    from setvision.vision.learn.training import fit_without_source, training_samples
    from setvision.vision.read.classify import load_models

    samples = training_samples(data, jobs)
    shipped = load_models(model)
    date = datetime.now(timezone.utc).isoformat(timespec="seconds")
    results = []
    for source, subset in sources.items():
        models = fit_without_source(samples, source, shipped.tempering)
        results.append(measure_source(source, subset, models, date, on_done))
    return results
