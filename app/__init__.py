"""The application layer: what setvision's commands do, between the command line and the library.

The command line (``setvision.cli``) parses arguments, calls one function here and prints what
comes back; ``vision.live`` and ``vision.report`` read photos through here too. Each module has
one job:

- ``readers``: the calibration profile chosen (named, the user's default, or none) and the
  reader built for it;
- ``paths``: which files a command's paths name, and where data, samples and models are;
- ``reading``: a photo read once into a ``Reading`` (layout, sets, verdict, contract record);
- ``claims``: a claimed set checked on a photo;
- ``calibrating``: a profile fitted from photos of known cards, and what calibration buys;
- ``evaluating``: accuracy on labelled photos, leave-one-source-out, card finding alone;
- ``training``: the attribute and card finder models fitted and written;
- ``benchmarking``: the pipeline timed over photos and videos.
"""
