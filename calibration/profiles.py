"""Calibration profiles on disk, and the reader that a command uses."""

from __future__ import annotations

from calibration.auto import calibrate_layout
from vision.classify import AttributeModels, load_models
from vision.pipeline import CardReader


def reader_for(
    profile: str | None = None,
    model: str | None = None,
    auto: bool = True,
    models: AttributeModels | None = None,
) -> CardReader:
    """A CardReader: the shipped (or given) model, the named profile, per-photo calibration."""
    models = models if models is not None else load_models(model)
    return CardReader(models, calibrate_layout if auto else None)
