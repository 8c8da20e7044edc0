"""Key work: :mod:`.table` (the key table dock, edited in place), :mod:`.commands` (the Key and Edit
menus' key edits), :mod:`.manipulators` (S-scale, nudges, jump to keys, the playback range)."""
