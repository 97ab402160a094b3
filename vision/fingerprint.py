"""Fingerprints of source code: which version of the code a model file or a cache was made by.

A model is only right for the code whose output it was fitted on. The fingerprint of that code,
stored in the model file, lets the loader refuse a model that the installed code no longer
matches (``vision.read.classify``); the feature cache is keyed by it too (``vision.learn``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from importlib import resources


def module_source(module: str) -> bytes:
    """The installed source of the module named ``module`` (e.g. ``setvision.vision.layout``),
    with line endings as ``\\n`` (a checkout on Windows gives the same bytes)."""
    package, _, name = module.rpartition(".")
    return (resources.files(package) / f"{name}.py").read_bytes().replace(b"\r\n", b"\n")


def package_modules(package: str, leave_out: Iterable[str] = ()) -> list[str]:
    """The names of the installed modules of ``package`` (its ``.py`` files), sorted, without
    the file names in ``leave_out`` (e.g. ``"__init__.py"``)."""
    skip = set(leave_out)
    return sorted(
        f"{package}.{p.name[:-3]}"
        for p in resources.files(package).iterdir()
        if p.name.endswith(".py") and p.name not in skip
    )


def code_fingerprint(modules: Iterable[str], extra: Iterable[bytes] = ()) -> str:
    """The sha256 (hex) of the named modules' source, in the order given, then of ``extra``
    (e.g. a model file the code reads, or a library's version)."""
    digest = hashlib.sha256()
    for module in modules:
        source = module_source(module)
        digest.update(f"{module} {len(source)}\n".encode())
        digest.update(source)
    for part in extra:
        digest.update(part)
    return digest.hexdigest()
