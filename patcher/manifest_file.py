"""Name the file in which ``apply`` records its run, for the code that writes it and the code that reads it back.

A leaf: the pipeline writes the manifest (``manifest.py`` renders it),
``patcher check`` reads its ``allowed_rules`` back, and neither should
have to import the other to agree on where it is.
"""

from __future__ import annotations

MANIFEST = "patcher-manifest.json"
