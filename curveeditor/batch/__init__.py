"""Recipes over many clip files, headless (``curveeditor-cli batch``; no Qt).

* :mod:`.runner`: :func:`~.runner.run_batch`, the in-process and process-pool engines, the report.
* :mod:`.jobs`: the work of one file, shared by every engine (read, run, render; the one write).
* :mod:`.dask_engine`: the Dask engine (the optional ``cluster`` extra, imported only for
  ``--scheduler``).
* :mod:`.progress`: the terminal progress bar.
"""
