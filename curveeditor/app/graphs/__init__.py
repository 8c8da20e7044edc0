"""The curve graphs: Euler channels, angular speed and quaternion components of the selected tracks.

:mod:`.panel` (``GraphPanel``: the strips' layout, display units, framing; maps document signals to
the parts below), :mod:`.host` (what the parts need of the panel), :mod:`.strips` (one plot and its
axes), :mod:`.track_drawer` (the tracks' curves and keys), :mod:`.marks` (selected keys, tangent
handles, gimbal bands, problem marks, legend), :mod:`.input` (mouse and keyboard), :mod:`.sampling`
(what is drawn, sampled once per track), :mod:`.items`, :mod:`.view_curve` and :mod:`.wheel_zoom`
(fast graphics items and zoom), :mod:`.layers` (extrapolation and playback range overlays),
:mod:`.buffer_curves` (Maya's buffer curves)."""
