"""setvision: find every card and every set on a photo or video of real SET cards.

Parts: ``vision`` (photo to a Layout of read cards), ``solver`` (sets, rules, claims),
``calibration`` (fit colour and fill to a deck and its light), ``app`` (what each command does:
read, check, calibrate, evaluate, train, time), ``cli`` (the command line).
"""

import os

#: OpenCV refuses to decode more pixels than this (``vision.image.MAX_PIXELS``): a backstop for
#: formats whose size is not read before decoding. OpenCV reads it once, when it is imported.
os.environ.setdefault("OPENCV_IO_MAX_IMAGE_PIXELS", "120000000")
