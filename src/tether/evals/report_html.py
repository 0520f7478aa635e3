"""report.to_html(): one self-contained page (inline CSS and SVG, no script, no request
for anything: its Content-Security-Policy forbids every load) with the score table, the
charts and, given the tether server's URL, a link per run to its session's timeline.

Every string of the report (case names, reasons, errors, stop reasons, session ids,
evaluator names) passes through the redaction path's free-text masks
(:func:`tether.governance.masks.redact_text`; the runner already applied the run's agent
masks), then its control, bidi and invisible characters are written as escapes
(:func:`tether.ops.terminal.visible`), then it is HTML-escaped.
"""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote, urlsplit

from tether.errors import ConfigurationError
from tether.evals.report_charts import histogram, rates
from tether.governance.masks import redact_text
from tether.ops.terminal import visible

if TYPE_CHECKING:
    from tether.evals.score import Score


class ShownRow(Protocol):
    """What the page reads of a :class:`tether.evals.report.RunRow` (a protocol: this
    module does not import the report, which imports it)."""

    case: str
    repeat: int
    session_id: str | None
    status: str
    stop_reason: str | None
    reason: str | None
    error: str | None
    latency: float
    scores: dict[str, Score]

    @property
    def passed(self) -> bool: ...

    @property
    def total_tokens(self) -> int: ...


class ShownStats(Protocol):
    @property
    def pass_rate(self) -> float | None: ...


class ShownReport(Protocol):
    """What the page reads of a :class:`tether.evals.report.Report`."""

    run_id: str
    repeat: int
    evaluators: list[str]

    @property
    def rows(self) -> Sequence[ShownRow]: ...

    @property
    def cases(self) -> list[str]: ...

    @property
    def pass_rate(self) -> float | None: ...

    @property
    def errors(self) -> Sequence[ShownRow]: ...

    @property
    def total_tokens(self) -> int: ...

    @property
    def cost(self) -> Decimal | None: ...

    def summary(self) -> dict[str, Any]: ...

    def evaluator(self, name: str, case: str | None = None) -> ShownStats: ...


CSP = "default-src 'none'; style-src 'unsafe-inline'"
STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d2330;background:#fafbfc}
h1{font-size:20px;margin:0 0 4px}.sub{color:#5b6472;margin:0 0 16px}
.totals{display:flex;gap:24px;margin:12px 0 20px}.totals div{background:#fff;
border:1px solid #dde2e8;border-radius:6px;padding:8px 14px}.totals b{display:block;font-size:18px}
.charts{display:flex;flex-wrap:wrap;gap:16px;margin-bottom:24px}
.chart{background:#fff;border:1px solid #dde2e8;border-radius:6px;font-size:11px}
.chart .title{font-size:12px;font-weight:600}.chart .note{fill:#5b6472}
.chart .bar{fill:#3b7dd8}.chart .bar.low{fill:#d8623b}.chart .track{fill:#eef1f4}
.chart .axis{stroke:#8a94a3}
table{border-collapse:collapse;background:#fff;width:100%}
th,td{border:1px solid #dde2e8;padding:4px 8px;text-align:left;vertical-align:top;
overflow-wrap:anywhere}th{background:#eef1f4;white-space:nowrap}td.n{white-space:nowrap}
.pass{color:#17803d}.fail{color:#b3261e}.err{color:#b3261e;font-weight:600}.dim{color:#8a94a3}
.reason{color:#5b6472;font-size:12px;white-space:pre-wrap}
"""


def text(value: object) -> str:
    """Untrusted ``value`` as HTML text: redacted, every invisible character visible,
    escaped (quotes too: safe in an attribute)."""
    shown = value if isinstance(value, str) else str(value)
    return html.escape(visible(redact_text(shown)), quote=True)


def check_server_url(server_url: str | None) -> str | None:
    """The server's base URL (http or https, no query or fragment), without a trailing /."""
    if server_url is None:
        return None
    parts = urlsplit(server_url) if isinstance(server_url, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc \
            or parts.query or parts.fragment:  # fmt: skip
        raise ConfigurationError(
            f"report.to_html(server_url=...) takes the tether server's http(s) URL, got "
            f"{server_url!r:.100}"
        )
    return server_url.rstrip("/")


def timeline_url(server_url: str, session_id: str) -> str:
    """The server page's timeline of ``session_id`` (the route of ops/server/views.py)."""
    return f"{server_url}/#timeline={quote(session_id, safe='')}"


def render(report: ShownReport, server_url: str | None = None) -> str:
    """The page, as a string."""
    base = check_server_url(server_url)
    summary = report.summary()
    rate = report.pass_rate
    cost = "unknown" if report.cost is None else f"{report.cost} USD"
    totals = [
        ("pass rate", "-" if rate is None else f"{rate:.0%}"),
        ("runs", str(len(report.rows))),
        ("errors", str(len(report.errors))),
        ("interrupted", str(summary["interrupted"])),
        ("tokens", str(report.total_tokens)),
        ("cost", cost),
    ]
    scores = [s.score for r in report.rows for s in r.scores.values() if s.score is not None]
    charts = [
        histogram("score distribution", scores, low=0.0, high=1.0, counted="scores"),
        rates("pass rate per evaluator",
              [(n, report.evaluator(n).pass_rate) for n in report.evaluators], text),
        histogram("latency", [r.latency for r in report.rows], low=0.0, unit="s"),
        histogram("tokens per run", [float(r.total_tokens) for r in report.rows], low=0.0),
    ]  # fmt: skip
    head = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>tether eval {text(report.run_id)}</title><style>{STYLE}</style></head><body>"
    )
    body = [
        f"<h1>tether eval {text(report.run_id)}</h1>",
        f'<p class="sub">{len(report.cases)} cases, repeat {report.repeat}, evaluators: '
        f"{text(', '.join(report.evaluators)) or '(none)'}</p>",
        '<div class="totals">'
        + "".join(f"<div>{label}<b>{text(value)}</b></div>" for label, value in totals)
        + "</div>",
        '<div class="charts">' + "".join(charts) + "</div>",
        _table(report, base),
    ]
    return head + "".join(body) + "</body></html>\n"


def write(report: ShownReport, path: str | os.PathLike[str], server_url: str | None = None) -> None:
    page = render(report, server_url)
    try:
        Path(path).write_text(page, encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(
            f"cannot write the report to {str(path)!r}: {exc.strerror or exc}"
        ) from None


def _table(report: ShownReport, base: str | None) -> str:
    head = "".join(f"<th>{text(n)}</th>" for n in report.evaluators)
    rows = [
        "<table><thead><tr><th>case</th><th>run</th><th>passed</th>"
        f"{head}<th>stop</th><th>tokens</th><th>latency</th><th>session</th></tr></thead><tbody>"
    ]
    for row in report.rows:
        cells = "".join(_score_cell(row.scores.get(n)) for n in report.evaluators)
        rows.append(
            f'<tr class="run"><td>{text(row.case)}{_error(row)}</td><td class="n">{row.repeat}</td>'
            f'<td class="n {"pass" if row.passed else "fail"}">{"yes" if row.passed else "no"}</td>'
            f'{cells}<td class="n">{text(row.stop_reason or row.status)}</td>'
            f'<td class="n">{row.total_tokens}</td><td class="n">{row.latency:.3f}s</td>'
            f"{_session(row, base)}</tr>"
        )
    rows.append("</tbody></table>")
    return "".join(rows)


def _error(row: ShownRow) -> str:
    if row.error is None and row.reason is None:
        return ""
    shown = row.error if row.error is not None else row.reason
    return f'<div class="reason">{"error: " if row.error else ""}{text(shown)}</div>'


def _score_cell(score: Score | None) -> str:
    if score is None:
        return '<td class="dim">-</td>'
    if score.error:
        label, css = "error", "err"
    elif score.score is None:
        label, css = "not scored", "dim"
    else:
        label, css = f"{score.score:.2f}", "pass" if score.passed else "fail"
    return f'<td class="{css}">{label}<div class="reason">{text(score.reason)}</div></td>'


def _session(row: ShownRow, base: str | None) -> str:
    if row.session_id is None:
        return '<td class="dim">-</td>'
    shown = text(row.session_id)
    if base is None:
        return f"<td>{shown}</td>"
    href = html.escape(timeline_url(base, row.session_id), quote=True)
    return f'<td><a class="timeline" href="{href}" rel="noreferrer">{shown}</a></td>'
