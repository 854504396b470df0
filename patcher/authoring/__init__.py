"""The patch author's loop: ``patcher new``, ``patcher test`` and ``patcher explain``.

- ``cases``: the checks ``patcher test`` (and the project's own pytest
  suite) runs for a patch set: each patch's examples, its round trips, and
  the safety rules' VALID / INVALID examples; each run returns a value.
- ``new``: write a new patch file from the ``new-patch`` template and list
  it, inactive, in ``series`` (``add_inactive_patch``, the one writer);
  find the nearest patch set above the current folder.
- ``series_file``: the series as an author edits it: active and inactive
  lines, loading an inactive patch for ``patcher test``, activating it,
  rewriting the file in one step with its mode kept.
- ``explain``: what a patch does in words, and where it matches in a drop.
"""
