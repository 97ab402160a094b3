"""Drawing a reading onto its photo and writing it where ``detect --out`` said.

In: a ``Reading`` (``app.reading``), the ``Annotator`` (how much to reveal) and the chosen
output file (``vision.report.files.annotated_outputs``). Out: the annotated JPEG written and
marked as setvision's, and the reading's record saying where (``annotated``) or why not
(``warning``).
"""

from __future__ import annotations

from setvision.app.reading import Reading
from setvision.solver.errors import SetvisionError
from setvision.vision.report import files
from setvision.vision.report.overlay import Annotator


def write_annotated(reading: Reading, annotator: Annotator, output: files.Output) -> str | None:
    """Write the reading's annotated image to ``output.path``; the error message, or None.

    The image is drawn at the photo's decoded size (corners scaled back from the original's).
    """
    photo = reading.photo
    picture = annotator.annotate(photo.image, reading.layout.scaled(1 / photo.scale))
    try:
        files.write_image(output.path, picture, mark=True)
    except SetvisionError as error:
        reading.record["warning"] = f"the annotated image could not be written: {error}"
        return str(error)
    reading.record["annotated"] = output.path
    return None
