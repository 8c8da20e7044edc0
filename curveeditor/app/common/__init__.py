"""What every layer of the editor uses and that knows no document: :mod:`.theme` (dark and light
themes), :mod:`.elided` (labels that elide in the middle), :mod:`.workers` (cancellable background
jobs whose results come back on the GUI thread)."""
