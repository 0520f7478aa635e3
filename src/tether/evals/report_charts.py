"""The HTML report's charts: inline SVG drawn here (no script, no library, no network).

Every label is escaped by the caller's ``text`` function (html.escape of the visible,
redacted string); numbers are formatted here.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

WIDTH = 420
HEIGHT = 200
PAD_LEFT = 40
PAD_BOTTOM = 34
PAD_TOP = 22
BINS = 10


def histogram(
    title: str, values: Sequence[float], *, low: float | None = None, high: float | None = None,
    unit: str = "", bins: int = BINS, counted: str = "runs",
) -> str:  # fmt: skip
    """Counts of ``values`` in ``bins`` equal bins from ``low`` to ``high`` (default: the
    values' range), as one ``<svg>`` with its axes labelled."""
    lo = min(values, default=0.0) if low is None else low
    hi = max(values, default=1.0) if high is None else high
    if hi <= lo:
        hi = lo + 1.0
    counts = [0] * bins
    for value in values:
        index = int((value - lo) / (hi - lo) * bins)
        counts[min(max(index, 0), bins - 1)] += 1
    top = max(counts, default=0) or 1
    plot_w, plot_h = WIDTH - PAD_LEFT - 10, HEIGHT - PAD_TOP - PAD_BOTTOM
    bar_w = plot_w / bins
    parts = [_frame(html.escape(title), top)]
    for i, count in enumerate(counts):
        h = plot_h * count / top
        x = PAD_LEFT + i * bar_w
        y = PAD_TOP + plot_h - h
        parts.append(
            f'<rect class="bar" x="{x + 1:.1f}" y="{y:.1f}" width="{bar_w - 2:.1f}" '
            f'height="{max(h, 0.0):.1f}"><title>{_num(lo + i * (hi - lo) / bins)}'
            f"-{_num(lo + (i + 1) * (hi - lo) / bins)}{unit}: {count}</title></rect>"
        )
    base = PAD_TOP + plot_h + 14
    ticks = ((lo, PAD_LEFT, "start"), ((lo + hi) / 2, PAD_LEFT + plot_w / 2, "middle"),
             (hi, PAD_LEFT + plot_w, "end"))  # fmt: skip
    for label, x, anchor in ticks:
        parts.append(
            f'<text x="{x:.1f}" y="{base}" text-anchor="{anchor}">{_num(label)}{unit}</text>'
        )
    parts.append(f'<text x="{PAD_LEFT + plot_w / 2:.1f}" y="{HEIGHT - 4}" text-anchor="middle" '
                 f'class="note">{len(values)} {counted}</text>')  # fmt: skip
    return _svg(html.escape(title), parts)


def rates(title: str, bars: Sequence[tuple[str, float | None]], text: Callable[[str], str]) -> str:
    """One horizontal bar per (label, rate in [0, 1] or None: "not scored")."""
    row = 24
    height = PAD_TOP + row * max(len(bars), 1) + 10
    label_w = 150
    plot_w = WIDTH - label_w - 50
    parts = [f'<text x="4" y="14" class="title">{text(title)}</text>']
    for i, (label, rate) in enumerate(bars):
        y = PAD_TOP + i * row
        parts.append(f'<text x="{label_w - 6}" y="{y + 15}" text-anchor="end">'
                     f"{text(label[:24])}</text>")  # fmt: skip
        parts.append(f'<rect class="track" x="{label_w}" y="{y + 3}" width="{plot_w}" '
                     'height="16"></rect>')  # fmt: skip
        if rate is None:
            parts.append(f'<text x="{label_w + 4}" y="{y + 15}" class="note">not scored</text>')
            continue
        parts.append(
            f'<rect class="{"bar" if rate >= 1 else "bar low"}" x="{label_w}" y="{y + 3}" '
            f'width="{max(plot_w * rate, 1.0):.1f}" height="16"></rect>'
        )
        parts.append(f'<text x="{label_w + plot_w + 6}" y="{y + 15}">{rate:.0%}</text>')
    return _svg(title, parts, height=height, label=text(title))


def _frame(title: str, top: int) -> str:
    plot_h = HEIGHT - PAD_TOP - PAD_BOTTOM
    return (
        f'<text x="4" y="14" class="title">{title}</text>'
        f'<line class="axis" x1="{PAD_LEFT}" y1="{PAD_TOP}" x2="{PAD_LEFT}" '
        f'y2="{PAD_TOP + plot_h}"></line>'
        f'<line class="axis" x1="{PAD_LEFT}" y1="{PAD_TOP + plot_h}" x2="{WIDTH - 10}" '
        f'y2="{PAD_TOP + plot_h}"></line>'
        f'<text x="{PAD_LEFT - 4}" y="{PAD_TOP + 8}" text-anchor="end">{top}</text>'
        f'<text x="{PAD_LEFT - 4}" y="{PAD_TOP + plot_h}" text-anchor="end">0</text>'
    )


def _svg(title: str, parts: list[str], *, height: int = HEIGHT, label: str | None = None) -> str:
    return (
        f'<svg class="chart" role="img" aria-label="{label or title}" width="{WIDTH}" '
        f'height="{height}" viewBox="0 0 {WIDTH} {height}" xmlns="http://www.w3.org/2000/svg">'
        + "".join(parts)
        + "</svg>"
    )


def _num(value: float) -> str:
    if value == int(value):
        return str(int(value))
    return f"{value:.3g}" if abs(value) < 10 else f"{value:.0f}"
