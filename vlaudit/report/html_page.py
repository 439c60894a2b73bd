"""Building blocks of the single-file HTML report: escaping, number cells, tables, embedded images, the page.

Every string that comes from data (captions, questions, model and file names) passes through :func:`esc`;
fragments built here are marked :class:`Safe` so they are not escaped twice. Images are embedded as base64
``data:`` URIs and the stylesheet is inline, so the page needs no network and no other file.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeGuard

from PIL import Image

from vlaudit.figures import pyplot
from vlaudit.results.missing import Missing
from vlaudit.stats.formatting import degenerate


class Safe(str):
    """An HTML fragment built by this module (already escaped); :func:`esc` passes it through unchanged."""


def esc(value: Any) -> Safe:
    """HTML-escape ``str(value)`` (quotes included) unless it is already :class:`Safe`; None → an em dash."""
    if isinstance(value, Safe):
        return value
    if value is None:
        return Safe("—")
    return Safe(html.escape(str(value), quote=True))


def is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def interval(ci: Any) -> tuple[float, float] | None:
    """A two-number interval, or None when absent or not finite."""
    if isinstance(ci, (list, tuple)) and len(ci) == 2 and all(is_number(x) for x in ci):
        return float(ci[0]), float(ci[1])
    return None


def num(value: Any, ci: Any = None, *, pct: bool = False, digits: int | None = None) -> Safe:
    """A number over its interval (``0.870`` / ``[0.80, 0.93]``); percent with ``pct``; — when missing, and
    ``— (reason)`` for :class:`~vlaudit.results.missing.Missing`."""
    if isinstance(value, Missing):  # not computable: the reason where the number would stand
        return Safe(f'<span class="na">{esc(value)}</span>')
    if not is_number(value):
        missing = value is None or isinstance(value, float) or value == ""
        return Safe('<span class="na">—</span>') if missing else esc(value)
    scale, digits = (100.0, 1 if digits is None else digits) if pct else (1.0, 3 if digits is None else digits)
    text = f"{scale * value:.{digits}f}"
    bounds = interval(ci)
    if bounds is None:
        return Safe(f'<span class="v">{text}</span>')
    if degenerate(bounds):  # a zero-width bootstrap interval is an artefact, not certainty
        return Safe(f'<span class="v">{text}</span><span class="ci">[—]</span>')
    lo, hi = (f"{scale * b:.{digits}f}" for b in bounds)
    return Safe(f'<span class="v">{text}</span><span class="ci">[{lo}, {hi}]</span>')


def table(headers: Sequence[Any], rows: Sequence[Sequence[Any]], *, numeric_from: int = 0,
          caption: Any = None, header_rows: Sequence[Sequence[tuple[Any, int]]] = (), cls: str = "") -> Safe:
    """A table; columns from ``numeric_from`` on are right-aligned. ``header_rows`` are spanning header
    rows (label, colspan) above ``headers``."""
    out = [f'<div class="scroll"><table class="{esc(cls)}">']
    if caption is not None:
        out.append(f"<caption>{esc(caption)}</caption>")
    out.append("<thead>")
    for row in header_rows:
        out.append("<tr>" + "".join(f'<th colspan="{span}" class="group">{esc(label)}</th>'
                                    for label, span in row) + "</tr>")
    out.append("<tr>" + "".join(f'<th class="{"num" if i >= numeric_from and numeric_from else ""}">'
                                f"{esc(h)}</th>" for i, h in enumerate(headers)) + "</tr></thead><tbody>")
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            name = "num" if numeric_from and i >= numeric_from else ""
            cells.append(f'<td class="{name}">{esc(cell)}</td>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    return Safe("".join(out))


def badge(passed: Any) -> Safe:
    if passed is True:
        return Safe('<span class="badge pass">pass</span>')
    if passed is False:
        return Safe('<span class="badge fail">fail</span>')
    return Safe('<span class="badge na">—</span>')


def data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def figure_png(fig: Any, dpi: int = 110) -> bytes:
    """PNG bytes of a matplotlib figure (closed afterwards); no metadata, so nothing names a web address."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    pyplot().close(fig)
    return buffer.getvalue()


def figure(fig: Any, caption: Any, *, alt: str = "plot") -> Safe:
    """A matplotlib figure embedded as a PNG data URI with a caption."""
    uri = data_uri(figure_png(fig), "image/png")
    return Safe(f'<figure class="plot"><img src="{uri}" alt="{esc(alt)}"><figcaption>{esc(caption)}'
                f"</figcaption></figure>")


def thumbnail(path: str | Path, size: int = 180) -> str | None:
    """A JPEG data URI of the image at ``path`` fitted in ``size``×``size``; None when it cannot be read."""
    try:
        with Image.open(path) as opened:
            image = opened.convert("RGB")
            # upscale tiny renders with nearest-neighbour so they stay sharp; shrink large photos smoothly
            scale = size / max(image.size)
            resample = Image.Resampling.NEAREST if scale > 1 else Image.Resampling.LANCZOS
            image = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))),
                                 resample)
            buffer = io.BytesIO()
            image.save(buffer, format="JPEG", quality=88)
    except Exception:  # noqa: BLE001  (an unreadable image is shown as missing, never blocks the report)
        return None
    return data_uri(buffer.getvalue(), "image/jpeg")


def img(uri: str | None, alt: Any) -> Safe:
    if uri is None:
        return Safe(f'<div class="noimg">image not found<br><small>{esc(alt)}</small></div>')
    return Safe(f'<img src="{uri}" alt="{esc(alt)}" loading="eager">')


def note(text: Any, kind: str = "") -> Safe:
    return Safe(f'<p class="note {esc(kind)}">{esc(text)}</p>')


def section(anchor: str, title: str, body: Sequence[Any], *, lead: Any = None) -> tuple[str, str, Safe]:
    """(anchor, title, html) of one report section."""
    parts = [f'<section id="{esc(anchor)}"><h2>{esc(title)}</h2>']
    if lead is not None:
        parts.append(f'<p class="lead">{esc(lead)}</p>')
    parts.extend(esc(b) for b in body)
    parts.append("</section>")
    return anchor, title, Safe("".join(parts))


CSS = """
:root{--ink:#1d232b;--muted:#667080;--line:#e3e6ea;--soft:#f6f7f9;--accent:#2f5d8a;--pass:#1f7a4d;
--fail:#b3261e;--good:#e6f2ea;--bad:#fbe9e7}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;color:var(--ink);background:#fff;font:15px/1.55 -apple-system,BlinkMacSystemFont,"Segoe UI",
Roboto,"Helvetica Neue",Arial,"Noto Sans",sans-serif}
header.top{background:#17202b;color:#fff;padding:28px 0 22px}
header.top h1{margin:0;font-size:26px;font-weight:650;letter-spacing:-.01em}
header.top p{margin:6px 0 0;color:#b8c2cf;font-size:14px}
.wrap{max-width:1180px;margin:0 auto;padding:0 28px}
nav{position:sticky;top:0;z-index:5;background:rgba(255,255,255,.96);border-bottom:1px solid var(--line);
backdrop-filter:blur(4px)}
nav .wrap{display:flex;flex-wrap:wrap;gap:4px 18px;padding-top:10px;padding-bottom:10px}
nav a{color:var(--accent);text-decoration:none;font-size:13.5px;font-weight:550}
nav a:hover{text-decoration:underline}
section{padding:26px 0 8px;border-bottom:1px solid var(--line)}
section:last-of-type{border-bottom:0}
h2{font-size:21px;margin:0 0 6px;font-weight:650;letter-spacing:-.01em}
h3{font-size:16px;margin:22px 0 8px;font-weight:620}
p.lead{color:var(--muted);margin:0 0 14px;max-width:860px}
p.note{color:var(--muted);font-size:13.5px;margin:6px 0 12px}
p.note.warn{color:#8a5300;background:#fdf3e1;border-left:3px solid #e3a13b;padding:6px 10px;border-radius:3px}
.scroll{overflow-x:auto;margin:8px 0 18px}
table{border-collapse:collapse;font-size:13.5px;font-variant-numeric:tabular-nums;min-width:40%}
caption{caption-side:top;text-align:left;color:var(--muted);font-size:13px;padding:0 0 6px}
th,td{padding:6px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
thead th{background:var(--soft);font-weight:600;font-size:12.5px;color:#3a4350;white-space:nowrap;
border-bottom:2px solid #cfd4da}
thead th.group{text-align:center;border-bottom:1px solid #cfd4da;background:#eef1f4}
td.num,th.num{text-align:right;white-space:nowrap}
table.wrap-heads thead th{white-space:normal;min-width:4em}
tbody tr:nth-child(even){background:#fbfbfc}
tbody tr:hover{background:#f2f6fa}
td .v{display:block;font-weight:560}
td .ci{display:block;color:var(--muted);font-size:11.5px}
td.good{background:var(--good)}td.bad{background:var(--bad)}
span.na{color:#aab}
.badge{display:inline-block;padding:1px 9px;border-radius:10px;font-size:12px;font-weight:650;
text-transform:uppercase;letter-spacing:.03em}
.badge.pass{background:var(--good);color:var(--pass)}.badge.fail{background:var(--bad);color:var(--fail)}
.badge.na{background:var(--soft);color:var(--muted)}
.tally{font-size:15px;margin:4px 0 10px}
figure.plot{margin:10px 0 22px}
figure.plot img{max-width:100%;height:auto;border:1px solid var(--line);border-radius:6px}
figcaption{color:var(--muted);font-size:13px;margin-top:6px;max-width:860px}
.gallery{display:grid;grid-template-columns:repeat(auto-fill,minmax(250px,1fr));gap:16px;margin:8px 0 22px}
.gallery.pairs{grid-template-columns:repeat(auto-fill,minmax(420px,1fr))}
.card{border:1px solid var(--line);border-radius:8px;padding:12px;background:#fff;
box-shadow:0 1px 2px rgba(20,30,40,.04)}
.card img{display:block;width:180px;height:auto;image-rendering:auto;border-radius:4px;border:1px solid var(--line)}
.card .q{font-size:13.5px;margin:8px 0 6px}
.card .meta{color:var(--muted);font-size:12px;margin:0 0 6px;overflow-wrap:anywhere}
.card table{min-width:0;width:100%;font-size:12px}
.card th,.card td{padding:2px 6px}
.gallery.choices{grid-template-columns:repeat(auto-fill,minmax(340px,1fr))}
.card .verdict{font-size:12.5px;margin:0 0 6px;font-weight:600}
.card .verdict.credited{color:var(--pass)}.card .verdict.uncredited{color:#8a5300}
.card tr.chosen td{background:var(--soft)}
.card .mark{color:var(--muted);font-size:11px;font-weight:600}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.pair .cap{font-size:13px;margin-top:6px}
.noimg{width:180px;height:120px;display:flex;flex-direction:column;align-items:center;justify-content:center;
background:var(--soft);color:var(--muted);font-size:12px;border-radius:4px;text-align:center;padding:6px;
word-break:break-all}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:3px 16px;font-size:13.5px;margin:6px 0 16px}
dl.kv dt{color:var(--muted)}dl.kv dd{margin:0;word-break:break-all}
code{font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--soft);
padding:1px 4px;border-radius:3px}
footer{color:var(--muted);font-size:12.5px;padding:18px 0 40px}
@media print{nav{display:none}section{break-inside:avoid-page}}
"""


def page(title: str, subtitle: Any, sections: Sequence[tuple[str, str, Safe]], footer: Any) -> str:
    """The whole document: inline stylesheet, a sticky nav over the sections, no script, no external file."""
    nav = "".join(f'<a href="#{esc(anchor)}">{esc(name)}</a>' for anchor, name, _ in sections)
    body = "".join(html_ for _, _, html_ in sections)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
            f'<header class="top"><div class="wrap"><h1>{esc(title)}</h1><p>{esc(subtitle)}</p></div></header>'
            f'<nav><div class="wrap">{nav}</div></nav><main class="wrap">{body}</main>'
            f'<footer class="wrap">{esc(footer)}</footer></body></html>\n')
