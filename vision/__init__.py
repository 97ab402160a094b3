"""The photo pipeline: an image goes in, a ``Layout`` of read ``Card``s comes out.

``image`` decodes and validates; ``find`` locates cards; ``read`` measures and classifies each
card; ``pipeline`` runs them in order. ``live``, ``learn`` and ``report`` build on it.
"""
