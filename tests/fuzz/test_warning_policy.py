"""The CLI's policy for numpy's floating-point warnings (issue 11, ``cli._run_command``): a failing
command prints only its one-line error; a succeeding one at most one ``warning:`` line summarizing
them, never numpy's raw two-line RuntimeWarning text."""

from __future__ import annotations

import numpy as np

from curveeditor import cli


def _stderr_lines(capsys) -> list[str]:
    return [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]


def test_success_prints_one_summary_line(tmp_path, capsys, monkeypatch):
    import curveeditor.engine.analysis as analysis

    real = analysis.inspect_clip

    def noisy(clip):
        np.exp(np.array([1000.0, 2000.0]))  # RuntimeWarning: overflow encountered in exp
        np.array([0.0]) / np.array([0.0])  # RuntimeWarning: invalid value encountered in divide
        return real(clip)

    monkeypatch.setattr(analysis, "inspect_clip", noisy)
    f = tmp_path / "a.csv"
    f.write_text("path,time,x,y,z\nHips,0,1,2,3\nHips,0.1,4,5,6\n")
    assert cli.main(["inspect", str(f)]) == 0
    lines = _stderr_lines(capsys)
    assert len(lines) == 1, lines
    assert lines[0].startswith("curveeditor-cli: warning: RuntimeWarning: overflow encountered in exp")
    assert "1 more" in lines[0] and "test_warning_policy.py" in lines[0]


def test_quiet_success_prints_nothing(tmp_path, capsys):
    f = tmp_path / "a.csv"
    f.write_text("path,time,x,y,z\nHips,0,1,2,3\nHips,0.1,4,5,6\n")
    assert cli.main(["inspect", str(f)]) == 0
    assert _stderr_lines(capsys) == []


def _noisy(then):
    def inspect_clip(clip):
        np.exp(np.array([1000.0]))  # RuntimeWarning: overflow encountered in exp
        return then(clip)

    return inspect_clip


def test_failure_prints_only_the_error(tmp_path, monkeypatch):
    """numpy warns inside a command that then fails with a typed error: the user sees the error line
    only. Run in a forked child with real file descriptors (in-process, pytest would swallow the
    warnings); the child inherits the monkeypatch."""
    import curveeditor.engine.analysis as analysis
    from curveeditor.io import ClipReadError
    from tests.fuzz.cases import Case
    from tests.fuzz.runner import run_case

    def refuse(clip):
        raise ClipReadError(clip.name + ".csv", 3, "refused after a numpy warning")

    data = b"path,time,x,y,z\nHips,0,1,2,3\nHips,0.1,4,5,6\n"
    real = analysis.inspect_clip
    monkeypatch.setattr(analysis, "inspect_clip", _noisy(refuse))
    failed = run_case(Case(".csv", data, "inspect"), root=str(tmp_path))
    assert failed.stderr.splitlines() == [
        "curveeditor-cli: error: in.csv:3: refused after a numpy warning"
    ], failed
    monkeypatch.setattr(analysis, "inspect_clip", _noisy(real))
    ok = run_case(Case(".csv", data, "inspect"), root=str(tmp_path))
    lines = ok.stderr.splitlines()
    assert ok.cls == "ok" and len(lines) == 1 and "RuntimeWarning: overflow encountered in exp" in lines[0], (
        ok
    )
