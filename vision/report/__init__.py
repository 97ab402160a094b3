"""Reports: Layouts go in, annotated images and the HTML review of many photos come out."""
