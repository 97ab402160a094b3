"""Which files a command reads and writes: photos named by paths, data, samples, model files.

In: paths as the user gave them (files and folders), or nothing. Out: the files to read in
order, the labelled data folder, the bundled sample photos (a package resource), and where a
freshly fitted model is written (never into site-packages).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from setvision.solver.errors import SetvisionError


def expand_paths(
    paths: Sequence[str], suffixes: tuple[str, ...] | None = None, kind: str = "images"
) -> list[str]:
    """Files as given; folders become their files with ``suffixes`` (default: images) in
    sorted order."""
    if suffixes is None:
        from setvision.vision.image import IMAGE_SUFFIXES as suffixes

    expanded = []
    for path in paths:
        if os.path.isdir(path):
            try:
                names = sorted(n for n in os.listdir(path) if n.lower().endswith(suffixes))
            except OSError as error:
                raise SetvisionError(f"{path}: cannot list the folder ({error.strerror})") from None
            if not names:
                raise SetvisionError(f"{path}: folder holds no {kind} ({', '.join(suffixes)})")
            expanded.extend(os.path.join(path, n) for n in names)
        else:
            expanded.append(path)
    return expanded


def data_dir(given: str | None = None) -> Path:
    """The labelled data folder: ``given``, else ``$SETVISION_DATA`` or ``../shared/data``."""
    from setvision.vision.learn.dataset import default_data_dir

    return Path(given) if given else default_data_dir()


def sample_photos() -> str:
    """The folder of bundled sample photos (a package resource)."""
    from setvision.vision.learn.dataset import sample_dir

    return str(sample_dir())


def checkout_model_path(out: str | None, name: str) -> str:
    """Where to write a model: ``out``, else the checkout's vision/models/ (never site-packages)."""
    if out:
        return out
    path = os.path.join("vision", "models", name)
    if not (os.path.isfile("pyproject.toml") and os.path.isdir(os.path.dirname(path))):
        raise SetvisionError(
            "training writes vision/models/ of a checkout: run it from the checkout, or give --out"
        )
    return path
