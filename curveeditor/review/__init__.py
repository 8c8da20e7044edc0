"""The review page of a batch (``batch ... --html DIR``, ``clean ... --html DIR``; issue 25): one
self-contained HTML file that opens from disk with no server and no network.

* :mod:`.data`: what a clip's entry shows, computed where the clip is processed (a batch worker):
  the worst tracks sampled as Unity plays them before and after (the written file read back),
  the keys dropped and the wraps and flips removed. Uses the engine (numpy); small results only.
* :mod:`.page`: the page itself from those results (standard library only): a sortable table of
  every input with its verdict and figures, links to the outputs, and per clip SVG plots.
"""
