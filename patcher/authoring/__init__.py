"""The patch author's loop: ``patcher new``, ``patcher test`` and ``patcher explain``.

- ``cases``: the checks ``patcher test`` (and the project's own pytest
  suite) runs for a patch set: each patch's examples, its round trips, and
  the safety rules' VALID / INVALID examples; each run returns a value.
- ``new``: write a new patch file from the ``new-patch`` template and add
  it to ``series``.
- ``explain``: what a patch does in words, and where it matches in a drop.
"""
