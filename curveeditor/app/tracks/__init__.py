"""The clip's tracks: :mod:`.tree` (the track tree with its filter and problem badges) and
:mod:`.problems_panel` (the Problems dock)."""
