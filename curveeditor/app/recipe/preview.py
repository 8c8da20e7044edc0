"""What the recipe panel handles: running the recipe on a worker thread (the latest run wins, stale
results dropped), the preview it sets on the document, its progress and cancel, Apply (one undo
command) and Discard, and re-runs when the clip or the selection changes.

A mixin of :class:`~curveeditor.app.recipe.panel.RecipePanel` (it uses the panel's ``runner``,
``steps``, status line, buttons and progress row, which the panel builds).
"""

from __future__ import annotations

from curveeditor.engine.recipe import OPS, RecipeError, run_recipe

from ..common.workers import run_in_thread

__all__ = ["RecipePreview"]


def _warm_up(_token, _progress) -> None:
    """Import the engine op modules (about 2 s of scipy imports on first use) off the GUI thread, so
    the first preview costs what the recipe costs."""
    import importlib

    for name in {s.module for s in OPS.values()} | {"diff"}:
        try:
            importlib.import_module(f"curveeditor.engine.{name}")
        except (ImportError, RuntimeError):
            # ImportError: reported by run_recipe when a step needs it. RuntimeError: importlib's
            # _DeadlockError should another thread import the same modules at this moment; that
            # import completes and the recipe imports on first use.
            pass


class RecipePreview:
    """Runs, preview, Apply / Discard of the recipe panel (mixin of ``RecipePanel``)."""

    def warm_up(self) -> None:
        """Import the engine's op modules on a worker thread (once). The window calls this after the
        first clip is drawn: started from ``__init__`` it held the GIL through ~1.9 s of
        scipy.signal / scipy.ndimage imports while the window tried to paint (cold start)."""
        if not self._warmed:
            self._warmed = True
            run_in_thread(_warm_up)

    def rerun(self) -> None:
        """Schedule a preview run now (debounced)."""
        self._changed()

    def _run_now(self) -> None:
        if not self._active:
            return
        enabled = [s for s in self.steps if s.enabled]
        if not enabled:
            self.runner.cancel()
            self._clear_preview()
            self._set_status("No enabled steps: nothing to preview.")
            return
        try:
            recipe = self.recipe()
        except RecipeError as e:
            self.runner.cancel()
            self._clear_preview()
            self._set_status(str(e), error=True)
            return
        paths = self.scope_paths()
        if paths is not None and not paths:
            self.runner.cancel()
            self._clear_preview()
            self._set_status("Select a track (or run on all tracks).")
            return
        clip = self.document.clip
        self._run_clip = clip
        self._set_status("Running\u2026")

        def job(token, progress):
            def tracks_done(done: int, total: int) -> None:
                progress(done / max(total, 1), f"{done} of {total} tracks")

            return run_recipe(clip, recipe, paths, cancel=token, progress=tracks_done)

        self.runner.submit(job)

    def _on_finished(self, _gen: int, result, seconds: float) -> None:
        if not self._active:
            return
        if self._run_clip is not self.document.clip:  # the clip changed while we ran
            self._debounce.start()
            return
        self.result = result
        self.diffsComputed.emit(self._run_clip, result.clip, list(result.diffs))
        self.figuresComputed.emit(self._run_clip, result.clip, dict(result.figures))
        self.document.set_preview(result.clip)
        n = len(result.changes)
        self._set_status(f"Preview of {n} track{'s' if n != 1 else ''} in {seconds * 1000:.0f} ms.")
        self._show_changes(result)
        self._update_buttons()
        self.resultReady.emit(result)

    def _on_failed(self, _gen: int, message: str, _tb: str) -> None:
        if not self._active:
            return
        self._clear_preview()
        self._set_status(message, error=True)

    def _show_changes(self, result) -> None:
        """Each step's figure (``RecipeResult.step_lines``: what a lossless step removed on purpose,
        a bounded step's error against its tolerance with ok/FAIL), then the selected track's own
        figures step by step; the engine words them, the panel only shows them."""
        from html import escape

        lines = [escape(line) for line in result.step_lines()]
        sel = self.document.selected_paths[:1]
        figs = result.figures.get(sel[0], ()) if sel else ()
        for f in figs:
            lines.append(f"<b>{escape(f.path or '(root)')}</b> " + escape(f.text().split(": ", 1)[-1]))
        tips = [f.text() for fl in result.figures.values() for f in fl if f.changed]
        notes = [n for fl in result.figures.values() for f in fl for n in f.notes]
        self.changes_label.setText("<br>".join(lines))
        self.changes_label.setToolTip("\n".join(tips[:40] + notes[:20]))

    def _clear_preview(self) -> None:
        self.result = None
        self.changes_label.setText("")
        self.document.set_preview(None)
        self._update_buttons()

    def apply(self) -> bool:
        """Bake the preview into the clip as one undoable step. Returns False when there is none."""
        preview = self.document.preview
        if preview is None or self.result is None:
            return False
        if self._run_clip is not self.document.clip:
            # The clip was edited after this preview was computed: baking it would undo that edit.
            self._set_status("The clip changed since this preview; recomputing\u2026", error=True)
            self._changed()
            return False
        self._active = False
        self._debounce.stop()
        self.runner.cancel()
        self._ignore_clip_change = True
        try:
            self.document.apply_clip(preview, "Apply recipe")
        finally:
            self._ignore_clip_change = False
        self._clear_preview()
        self._set_status("Applied (Ctrl+Z to undo). Change a parameter to preview again.")
        self.applied.emit()
        return True

    def cancel_run(self) -> None:
        """Stop the running preview; the clip and any earlier preview stay as they are."""
        if not self.runner.busy:
            return
        self._active = False
        self._debounce.stop()
        self.runner.cancel()
        self._set_status("Preview cancelled. Change a parameter to preview again.")

    def _on_busy(self, busy: bool) -> None:
        if busy:
            self.progress_bar.setValue(0)
            self.progress_bar.setFormat("running…")
            self._progress_timer.start()
        else:
            self._progress_timer.stop()
            self.progress_row.hide()

    def _show_progress(self) -> None:
        if self.runner.busy:
            self.progress_row.show()

    def _on_progress(self, _gen: int, fraction: float, text: str) -> None:
        self.progress_bar.setValue(round(1000 * fraction))
        self.progress_bar.setFormat(text)

    def discard(self) -> None:
        """Drop the preview and stop previewing until the next change."""
        self._active = False
        self._debounce.stop()
        self.runner.cancel()
        self._clear_preview()
        self._set_status("Preview discarded.")

    def shutdown(self) -> None:
        """Stop the worker (call before the application quits)."""
        self._debounce.stop()
        self.runner.shutdown()

    def _on_doc_selection(self) -> None:
        if self._active and self.scope.currentData() == "selected":
            self._debounce.start()

    def _on_doc_clip(self) -> None:
        if self._active and not self._ignore_clip_change:
            self.apply_button.setEnabled(False)  # the preview is stale until the re-run lands
            self._debounce.start()
