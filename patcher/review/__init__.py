"""Review what a run would do, without writing it: diffs, mirror sync checks, what the image ships.

The stage after ``pipeline.build``: ``changes``/``series``/``textdiff`` and
``render`` for ``patcher diff``, ``sync`` for ``patcher verify-sync``,
``inspect`` for ``patcher inspect``, ``history`` for ``apply --record-git``.
Everything here returns values; the CLI prints them.
"""
