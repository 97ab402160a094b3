"""Fitting the shipped models from the labelled data and writing them.

In: the labelled data folder and where to write (default: the checkout's vision/models/, see
``app.paths.checkout_model_path``). Out: the attribute models (``vision/models/default.json``,
stamped with the fingerprint of the feature code that measured their samples) or the card
finder's model (``vision/models/finder.json``), written, and what they were fitted on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from setvision.app.paths import checkout_model_path
from setvision.vision.read.classify import DEFAULT_MODEL, AttributeModels


@dataclass(frozen=True)
class Written:
    """A fitted model and the file it was written to."""

    model: AttributeModels
    path: Path


def train_attributes(data: Path, out: str | None = None, jobs: int = 1, boards: bool = True):
    """Fit the attribute models on the crops (and the labelled boards' cards) and write them."""
    from setvision.vision.learn.training import fit_models, training_samples

    path = Path(checkout_model_path(out, DEFAULT_MODEL))
    models = fit_models(training_samples(data, jobs, boards=boards))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(models.to_json())
    return Written(models, path)


def train_card_finder(
    data: Path,
    out: str | None = None,
    jobs: int = 1,
    on_done: Callable[[str], None] | None = None,
    seed: int = 0,
):
    """Fit the card finder's model (its forests drawn with ``seed``) and write it; returns
    ``(report, path)``, the report with the held-out figures the fit was chosen by
    (``vision.learn.find_training``)."""
    from setvision.vision.find.cardness import FINDER_MODEL
    from setvision.vision.learn.find_training import train_finder

    path = Path(checkout_model_path(out, FINDER_MODEL))
    report = train_finder(data, jobs, on_done, seed)
    path.write_text(report.model.to_json())
    return report, path
