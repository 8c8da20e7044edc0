"""The main window (:mod:`.main_window`) and what it handles, one mixin or helper each:
:mod:`.layout` (docks, saved layouts), :mod:`.actions` (actions and menus), :mod:`.file_menu`
(open / recent / drop / close), :mod:`.files` (reading, saving, exporting, autosave on worker
threads), :mod:`.settings`, :mod:`.shortcuts` (the shortcut list), :mod:`.timeline` (the playback
bar), :mod:`.editing_tools` (dope sheet, 3D character, key manipulators, buffer curves wired in)."""
