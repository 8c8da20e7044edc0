"""The dope sheet: one row per track with its key ticks (:mod:`.sheet`), drawn as pixels with a drag
preview (:mod:`.ticks`)."""
