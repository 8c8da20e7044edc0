"""The recipe panel and what shows its results: :mod:`.panel` (the list of steps), :mod:`.steps` (its
model), :mod:`.form` (a step's parameter widgets, from the engine's operation registry),
:mod:`.preview` (runs, preview, Apply), :mod:`.diff_panel` (the Diff dock: before/after error),
:mod:`.compare` (the A/B compare of resampling methods)."""
