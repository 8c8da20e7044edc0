"""Fuzz suite for the readers, writers and the CLI (issue 11).

Modules:

* :mod:`.seeds`: small valid ``.anim``, BVH and CSV files made in code (the project's own writers,
  ``curveeditor.samples`` and hand-made BVH text), driven by a ``random.Random``.
* :mod:`.mutations`: byte-level and structure-aware mutations of those files.
* :mod:`.cases`: a :class:`~.cases.Case` = seed + mutations + command (``inspect``, ``convert``,
  ``clean``, ``sample``, or ``load``, the editor's headless load step), built from one ``Random``.
* :mod:`.runner`: runs a case in a forked child (memory limit, time limit, captured fds) and
  classifies the outcome against the contract (exit 0 with an output that reads back to the same
  tracks, or exit 2 with one stderr line naming the file).
* ``test_fuzz_*.py``: the CI part (hypothesis, fixed budget); ``python -m tests.fuzz --minutes N``:
  the long run with counts per class and minimal reproducers.

Everything is seeded: the same ``Random`` gives the same case.
"""
