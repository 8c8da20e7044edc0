"""The review page: one self-contained HTML file (inline CSS, SVG and a few lines of script; no
server, no network) over the entries of a batch or a single ``clean`` (:mod:`curveeditor.review`).

An entry is a dict: ``input``, ``output`` (None for a failed file), ``status`` ("ok", "failed",
"cancelled"), ``error``, ``ok`` (the verdict), ``reason`` (the verdict's text), ``tracks``,
``keys_before``, ``keys_after``, ``max_error``, ``rms_error`` (degrees, the written file read back
against the input, intended changes included), ``steps`` (one line per recipe step: what it changed
on purpose, each lossy step's figure against its tolerance) and ``review``
(:func:`~curveeditor.review.data.clip_review`'s list).

The table lists every input with its verdict and figures and links to its output and its section;
its headers sort it (worst error first when the page opens). A clip's section plots its worst tracks
as Unity plays them: X, Y and Z in strips, the input dashed and the written file solid, the wraps and
flips the clean-up removed on purpose marked (orange lines, "intended") and the input keys it
dropped ticked along the bottom.
"""

from __future__ import annotations

import html
import json
import math
import os
from collections.abc import Sequence

__all__ = ["write_page", "page_html", "COLOURS"]

#: The editor's light theme (``app/common/theme.LIGHT``: channels X, Y, Z, the ghost, problem
#: kinds); ``tests/test_review_page.py`` checks they stay equal.
COLOURS = {
    "x": "#d62828",
    "y": "#2a9d3a",
    "z": "#1f5fd0",
    "original": "#9a9a9a",
    "wrap": "#d46a00",
    "flip": "#d00030",
    "hemisphere": "#7b2cbf",
    "text": "#1d1d1f",
    "grid": "#d8d8d8",
}

_W, _STRIP, _LEFT, _RIGHT, _TOP, _BOTTOM = 760, 112, 58, 12, 8, 26


def _nice_ticks(lo: float, hi: float, n: int = 4) -> list[float]:
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    return [first + k * step for k in range(int((hi - first) / step + 1e-9) + 1)]


def _fmt(v: float) -> str:
    return f"{v:.0f}" if abs(v) >= 10 or v == int(v) else f"{v:.1f}"


def _polyline(xs: Sequence[float], ys: Sequence[float]) -> str:
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, ys, strict=True))


def _plot(track: dict) -> str:
    """One track's SVG: three strips (X, Y, Z), shared time axis."""
    t = track["times"]
    t0, t1 = (t[0], t[-1]) if t else (0.0, 1.0)
    if t1 <= t0:
        t1 = t0 + 1.0
    inner = _W - _LEFT - _RIGHT
    height = _TOP + 3 * _STRIP + _BOTTOM

    def x_of(v: float) -> float:
        return _LEFT + (v - t0) / (t1 - t0) * inner

    xs = [x_of(v) for v in t]
    out = [
        f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{height}" '
        f'viewBox="0 0 {_W} {height}" role="img" aria-label="{html.escape(track["path"])}">'
    ]
    for c, name in enumerate("xyz"):
        b, a = track["before"][c], track["after"][c]
        vals = [v for v in (*b, *a) if math.isfinite(v)]
        lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
        if hi - lo < 1e-6:
            lo, hi = lo - 1.0, hi + 1.0
        pad = 0.06 * (hi - lo)
        lo, hi = lo - pad, hi + pad
        top = _TOP + c * _STRIP
        bottom = top + _STRIP - 10

        def y_of(v: float, top=top, bottom=bottom, lo=lo, hi=hi) -> float:
            return bottom - (v - lo) / (hi - lo) * (bottom - top)

        out.append(f'<rect x="{_LEFT}" y="{top}" width="{inner}" height="{bottom - top}" class="strip"/>')
        for tick in _nice_ticks(lo, hi):
            y = y_of(tick)
            out.append(f'<line x1="{_LEFT}" x2="{_W - _RIGHT}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>')
            out.append(f'<text x="{_LEFT - 4}" y="{y + 3:.1f}" class="ylab">{_fmt(tick)}</text>')
        out.append(
            f'<text x="{_LEFT + 6}" y="{top + 13}" class="ch" fill="{COLOURS[name]}">'
            f"{name.upper()} (deg)</text>"
        )
        for cls, vals in (("before", b), ("after", a)):
            points = _polyline(xs, [y_of(v) for v in vals])
            out.append(f'<polyline class="{cls}" stroke="{COLOURS[name]}" points="{points}"/>')
        for d in track["dropped"]:
            x = x_of(d)
            out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{bottom - 4}" y2="{bottom}" class="dropped"/>')
    for when, kind in track["removed"]:
        x = x_of(when)
        colour = COLOURS.get(kind, COLOURS["wrap"])
        out.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{_TOP}" y2="{_TOP + 3 * _STRIP - 10}" stroke="{colour}" '
            f'class="removed"><title>{html.escape(kind)} removed (intended) at {when:.3f} s</title></line>'
        )
    base = _TOP + 3 * _STRIP - 10
    for tick in _nice_ticks(t0, t1, 8):
        x = x_of(tick)
        out.append(f'<text x="{x:.1f}" y="{base + 16}" class="xlab">{_fmt(tick)}</text>')
    out.append(f'<text x="{_W - _RIGHT}" y="{height - 2}" class="xunit">time (s)</text>')
    out.append("</svg>")
    return "".join(out)


_CSS = """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d1d1f;margin:24px;max-width:1100px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 4px}h3{font-size:13px;margin:12px 0 2px;
font-weight:600;word-break:break-all}.sub{color:#555;margin:0 0 16px}
table{border-collapse:collapse;width:100%}th,td{padding:4px 8px;border-bottom:1px solid #e4e4e4;
text-align:left;vertical-align:top}th{cursor:pointer;user-select:none;background:#f5f5f7;position:sticky;
top:0}th.sorted-desc::after{content:" \\25BC"}th.sorted-asc::after{content:" \\25B2"}td.num{text-align:right;
font-variant-numeric:tabular-nums}
td.file{word-break:break-all;min-width:220px;max-width:340px}td .note{max-width:300px;
word-break:break-word}.ok{color:#1f7a2e;font-weight:600}
.failed{color:#c0182d;font-weight:600}.note{color:#555;font-size:12px}
svg.plot{display:block;margin:4px 0 10px;background:#fff}svg .strip{fill:#fff;stroke:#cfcfcf}
svg .grid{stroke:#e6e6e6}svg .ylab{font:10px sans-serif;fill:#555;text-anchor:end}
svg .xlab{font:10px sans-serif;fill:#555;text-anchor:middle}svg .xunit{font:10px sans-serif;fill:#555;
text-anchor:end}svg .ch{font:11px sans-serif;font-weight:600;paint-order:stroke;stroke:#fff;
stroke-width:3}svg .before{fill:none;stroke-width:1.6;
stroke-dasharray:5 3;opacity:.45}svg .after{fill:none;stroke-width:1.5}svg .dropped{stroke:#8a8a8a;
stroke-width:1}svg .removed{stroke-width:1.5;opacity:.8}.legend span{margin-right:14px}
"""

_JS = """
(function(){
  var table=document.getElementById('files'),body=table.tBodies[0];
  function key(row,i){var c=row.cells[i],v=c.getAttribute('data-sort');
    if(v===null)v=c.textContent;var n=parseFloat(v);return isNaN(n)?v.toLowerCase():n;}
  function sort(i,desc){var rows=Array.prototype.slice.call(body.rows);
    rows.sort(function(a,b){var x=key(a,i),y=key(b,i);
      if(x<y)return desc?1:-1;if(x>y)return desc?-1:1;return 0;});
    rows.forEach(function(r){body.appendChild(r);});
    Array.prototype.forEach.call(table.tHead.rows[0].cells,function(h,j){
      h.classList.remove('sorted-asc','sorted-desc');if(j===i)h.classList.add(desc?'sorted-desc':'sorted-asc');});}
  Array.prototype.forEach.call(table.tHead.rows[0].cells,function(h,i){
    h.addEventListener('click',function(){sort(i,!h.classList.contains('sorted-desc'));});});
  sort(parseInt(table.getAttribute('data-default-sort'),10),true);
})();
"""


def _link(target: str | None, base: str) -> str:
    if not target:
        return ""
    rel = os.path.relpath(os.path.abspath(target), base).replace(os.sep, "/")
    return f'<a href="{html.escape(rel)}">{html.escape(os.path.basename(target))}</a>'


def page_html(entries: Sequence[dict], title: str, base: str, note: str = "") -> str:
    """The page's HTML; ``base`` is the folder the page is written in (links are relative to it)."""
    n_ok = sum(1 for e in entries if e.get("ok"))
    rows, sections = [], []
    for k, e in enumerate(entries):
        anchor = f"clip{k}"
        ok = bool(e.get("ok"))
        verdict = '<span class="ok">ok</span>' if ok else '<span class="failed">FAILED</span>'
        err = e.get("max_error")
        rms = e.get("rms_error")
        rows.append(
            "<tr>"
            f'<td class="num">{k + 1}</td>'
            f'<td class="file" title="{html.escape(e["input"])}"><a href="#{anchor}">'
            f"{html.escape(os.path.basename(e['input']) or e['input'])}</a></td>"
            f'<td data-sort="{0 if ok else 1}">{verdict}'
            f'<div class="note">{html.escape(e.get("reason") or "")}</div></td>'
            f'<td class="num">{e.get("tracks", "")}</td>'
            f'<td class="num" data-sort="{e.get("keys_after", -1)}">{e.get("keys_before", "")} &rarr; '
            f"{e.get('keys_after', '')}</td>"
            f'<td class="num" data-sort="{err if err is not None else -1}">'
            f"{'' if err is None else f'{err:.4f}'}</td>"
            f'<td class="num">{"" if rms is None else f"{rms:.4f}"}</td>'
            f'<td class="file">{_link(e.get("output"), base)}</td>'
            "</tr>"
        )
        plots = []
        for tr in e.get("review") or []:
            legend = (
                f'<div class="note">{html.escape(tr["kind"])} {html.escape(tr["order"])}, keys '
                f"{tr['keys_before']} &rarr; {tr['keys_after']} ({len(tr['dropped'])} dropped), max error "
                f"{tr['max_error']:.4f} deg"
                + (f", {len(tr['removed'])} wrap/flip(s) removed (intended)" if tr["removed"] else "")
                + "</div>"
            )
            plots.append(f"<h3>{html.escape(tr['path'] or '(root)')}</h3>{legend}{_plot(tr)}")
        body = "".join(plots) if plots else '<p class="note">no plots (no rotation track written)</p>'
        if e.get("steps"):
            items = "".join(f"<li>{html.escape(line)}</li>" for line in e["steps"])
            body = f'<ul class="steps note">{items}</ul>' + body
        if e.get("status") != "ok":
            body = f'<p class="failed">{html.escape(e.get("error") or e.get("status", ""))}</p>'
        sections.append(
            f'<section id="{anchor}"><h2>{k + 1}. {html.escape(os.path.basename(e["input"]))}</h2>'
            f'<p class="sub">{verdict} {html.escape(e.get("reason") or "")} &middot; '
            f"{_link(e.get('output'), base)}</p>{body}</section>"
        )
    legend = (
        '<p class="legend note"><span>dashed: the input as Unity plays it</span><span>solid: the written '
        'file read back</span><span style="color:#d46a00">| wrap/flip removed on purpose</span>'
        "<span>&#x2758; input key dropped</span></p>"
    )
    head = (
        "<tr><th>#</th><th>input</th><th>verdict</th><th>tracks</th><th>keys before &rarr; after</th>"
        "<th title='the played motion of the written file against the input, intended changes (wraps "
        "and flips removed) included; the verdict holds each step to its tolerance'>played change (deg)</th>"
        "<th>rms (deg)</th><th>output</th></tr>"
    )
    data = html.escape(json.dumps({"files": len(entries), "ok": n_ok}))
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>"
        f'<body data-summary="{data}"><h1>{html.escape(title)}</h1>'
        f'<p class="sub">{len(entries)} file(s): {n_ok} ok, {len(entries) - n_ok} not ok. '
        f"{html.escape(note)}</p>"
        f'{legend}<table id="files" data-default-sort="5"><thead>{head}</thead><tbody>{"".join(rows)}'
        f"</tbody></table>{''.join(sections)}<script>{_JS}</script></body></html>\n"
    )


def write_page(folder: str, entries: Sequence[dict], title: str, note: str = "") -> str:
    """Write ``folder/index.html`` (atomically, the folder made if needed); returns its path."""
    from ..io.atomic import atomic_write_text

    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "index.html")
    atomic_write_text(path, page_html(entries, title, os.path.abspath(folder), note))
    return path
