"""Reading one photo, once: a file goes in, a ``Reading`` comes out.

In: a photo's path (or the ``Photo`` already loaded), the ``CardReader`` and the
``ProfileChoice`` it was built for (``app.readers``), and how much of the answer to reveal.
Out: a ``Reading`` holding the decoded photo, its ``Layout`` (cards in reading order), the sets,
the verdict and the contract record (``shared/contract``, with the profile added as
``profile``), each computed once. ``detect``, ``check`` and ``review`` read photos through
``read_photo``; a file that cannot be read raises a ``SetvisionError`` naming it.
"""

from __future__ import annotations

from dataclasses import dataclass

from setvision.app.readers import ProfileChoice
from setvision.vision.contract import layout_record
from setvision.vision.image import Photo, load
from setvision.vision.layout import Layout
from setvision.vision.pipeline import CardReader


@dataclass(frozen=True)
class Reading:
    """One photo read: what was read, and the contract record made of it.

    ``sets`` are card ids (1-based, as numbered on the image); ``record`` is the line
    ``detect --json`` prints, to which a command may add fields (``annotated``, ``warning``).
    """

    source: str
    photo: Photo
    layout: Layout
    sets: list[tuple[int, int, int]]
    verdict: str
    record: dict
    profile: ProfileChoice


def read_photo(
    source: str, reader: CardReader, profile: ProfileChoice, reveal: str = "all"
) -> Reading:
    """Load the photo at ``source`` and read it (see ``reading_of``)."""
    return reading_of(load(source), source, reader, profile, reveal)


def reading_of(
    photo: Photo, source: str, reader: CardReader, profile: ProfileChoice, reveal: str = "all"
) -> Reading:
    """Read a loaded photo with ``reader`` (built for ``profile``); the record names ``source``
    and hides the sets as ``reveal`` says in its message."""
    layout = reader.read_photo(photo)
    record = layout_record(layout, source, reveal)
    record["profile"] = profile.name
    return Reading(source, photo, layout, layout.sets, layout.verdict, record, profile)
