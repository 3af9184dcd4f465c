"""The leaderboards of a run, from its ``results.json`` content, in every format navdtw writes:
fixed-width text (the terminal), Markdown, CSV, LaTeX (booktabs) and HTML (notebooks).

Every format starts from one model, :func:`leaderboard_rows` (per data set: the metrics, and one
row per agent plus the baseline row, each cell ``(mean, lo, hi, mark)``), and has its own section
below with its own escaping of names (:func:`md_escape`, :func:`tex_escape`, ``html.escape``).
Rates are shown in percent everywhere but in the CSV (fractions, as ``results.json``).
"""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Mapping

from .baselines import BASELINE_ROW
from .marks import leaderboard_marks, metric_info

__all__ = [
    "format_leaderboard",
    "format_leaderboard_csv",
    "format_leaderboard_html",
    "format_leaderboard_md",
    "format_leaderboard_tex",
    "leaderboard_rows",
    "md_escape",
    "tex_escape",
]

_METHOD_NAMES = {"bca": "BCa", "percentile": "percentile"}

_MARK_NOTE = (
    "Bold: best mean. {dagger}: not significantly different from the best (paired permutation test, "
    "Holm-adjusted p >= {alpha:g} over the pairs of agents compared on that metric). No marks on metrics "
    "without a direction (PL). Rates in percent."
)


# --------------------------------------------------------------------------------------------
# the model every format shares
# --------------------------------------------------------------------------------------------


def leaderboard_rows(ds: Mapping, alpha: float):
    """``(metrics, rows)`` of one data set of ``results.json``: ``rows`` are
    ``(agent, {metric: (mean, lo, hi, mark)})`` with mark ``"best"``, ``"tied"`` or ``""``; the
    baseline row comes last (no interval, no mark)."""
    marks = leaderboard_marks(ds, alpha)
    metrics: dict[str, None] = {}
    for values in ds["agents"].values():
        metrics.update(dict.fromkeys(values))
    metrics.update(dict.fromkeys(ds.get("baseline", {})))
    rows = []
    for agent, values in ds["agents"].items():
        cells = {}
        for m, v in values.items():
            mk = marks.get(m, {})
            mark = "best" if agent in mk.get("best", ()) else "tied" if agent in mk.get("tied", ()) else ""
            cells[m] = (v["mean"], v["ci"][0], v["ci"][1], mark)
        rows.append((agent, cells))
    if ds.get("baseline"):
        rows.append((BASELINE_ROW, {m: (v["mean"], None, None, "") for m, v in ds["baseline"].items()}))
    return list(metrics), rows


def _fmt(x: float | None, rate: bool) -> str:
    if x is None:
        return "n/a"
    return f"{x * 100:.1f}" if rate else f"{x:.2f}"


def _header(m: str) -> str:
    info = metric_info(m)
    unit = "%" if info["rate"] else info["unit"]
    arrow = {True: "↑", False: "↓", None: ""}[info["higher_is_better"]]
    return f"{info['label']}{arrow}" + (f" ({unit})" if unit else "")


def _caption(name: str, ds: Mapping, settings: Mapping) -> str:
    unit = "paths" if ds.get("resampling") == "path" else "episodes"
    return (
        f"{name}: {ds['dataset']}, convention {ds['convention']}, {ds['n']} episodes; means with "
        f"{settings['confidence'] * 100:g}% {_METHOD_NAMES[settings['method']]} bootstrap intervals "
        f"({settings['resamples']} resamples by {unit})"
    )


def _failure_line(f: Mapping) -> str:
    who = " on ".join(str(f[k]) for k in ("agent", "dataset") if f.get(k))
    return f"{who}: {f['error']}"


# --------------------------------------------------------------------------------------------
# terminal: fixed-width text
# --------------------------------------------------------------------------------------------


def format_leaderboard(results: Mapping) -> str:
    """The leaderboards as fixed-width text (means only; rates in percent): ``*`` marks the best
    agent, ``†`` the agents not significantly different from it.

    Parameters
    ----------
    results:
        the content of ``results.json`` (what :func:`navdtw.suite.run` returns).
    """
    settings = results["settings"]
    blocks = []
    for name, ds in results["datasets"].items():
        metrics, rows = leaderboard_rows(ds, settings["alpha"])
        head = ["agent"] + [_header(m) for m in metrics]
        body = []
        for agent, cells in rows:
            line = [agent]
            for m in metrics:
                mean, _, _, mark = cells.get(m, (None, None, None, ""))
                line.append(_fmt(mean, metric_info(m)["rate"]) + {"best": "*", "tied": "†", "": " "}[mark])
            body.append(line)
        widths = [max(len(r[c]) for r in [head, *body]) for c in range(len(head))]
        lines = [_caption(name, ds, settings)]
        for r in [head, None, *body]:
            if r is None:
                lines.append("-" * (sum(widths) + 2 * (len(widths) - 1)))
                continue
            lines.append("  ".join(c.ljust(w) if k == 0 else c.rjust(w) for k, (c, w) in enumerate(zip(r, widths))))
        blocks.append("\n".join(lines))
    note = "*: best mean; " + _MARK_NOTE.split(". ", 1)[1].format(dagger="†", alpha=settings["alpha"])
    return "\n\n".join(blocks) + "\n\n" + note


# --------------------------------------------------------------------------------------------
# Markdown (leaderboard.md)
# --------------------------------------------------------------------------------------------


def md_escape(text: str) -> str:
    """A name safe in a Markdown table cell: ``|`` is escaped."""
    return str(text).replace("|", "\\|")


def format_leaderboard_md(results: Mapping) -> str:
    """``leaderboard.md``: one Markdown table per data set (means with intervals; the best mean in
    bold, ``†`` on the agents not significantly different from it), the marks' note and the
    failures.

    Parameters
    ----------
    results:
        the content of ``results.json``.
    """
    settings = results["settings"]
    out = ["# Leaderboard", ""]
    for name, ds in results["datasets"].items():
        metrics, rows = leaderboard_rows(ds, settings["alpha"])
        out += [f"## {name}", "", _caption(name, ds, settings) + ".", ""]
        out.append("| agent | " + " | ".join(_header(m) for m in metrics) + " |")
        out.append("|---|" + "---:|" * len(metrics))
        for agent, cells in rows:
            line = [md_escape(agent)]
            for m in metrics:
                if m not in cells:
                    line.append("")
                    continue
                mean, lo, hi, mark = cells[m]
                rate = metric_info(m)["rate"]
                text = _fmt(mean, rate)
                text = f"**{text}**" if mark == "best" else f"{text}†" if mark == "tied" else text
                if lo is not None or hi is not None:
                    text += f" [{_fmt(lo, rate)}, {_fmt(hi, rate)}]"
                line.append(text)
            out.append("| " + " | ".join(line) + " |")
        out.append("")
    out.append(_MARK_NOTE.format(dagger="†", alpha=settings["alpha"]))
    if results.get("failures"):
        out += ["", "## Failures", ""]
        out += [f"- {_failure_line(f)}" for f in results["failures"]]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# CSV (leaderboard.csv)
# --------------------------------------------------------------------------------------------


def format_leaderboard_csv(results: Mapping) -> str:
    """``leaderboard.csv``, long format: one row per (data set, agent or baseline, metric) with
    ``mean, lo, hi`` as fractions (as ``results.json``), ``best`` and ``not_significantly_worse``
    as 0/1.

    Parameters
    ----------
    results:
        the content of ``results.json``.
    """
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["dataset", "agent", "metric", "mean", "lo", "hi", "best", "not_significantly_worse"])
    alpha = results["settings"]["alpha"]
    for name, ds in results["datasets"].items():
        metrics, rows = leaderboard_rows(ds, alpha)
        for agent, cells in rows:
            for m in metrics:
                if m in cells:
                    mean, lo, hi, mark = cells[m]
                    numbers = ("" if x is None else repr(x) for x in (mean, lo, hi))
                    w.writerow([name, agent, m, *numbers, int(mark == "best"), int(mark in ("best", "tied"))])
    return buf.getvalue()


# --------------------------------------------------------------------------------------------
# LaTeX (leaderboard.tex)
# --------------------------------------------------------------------------------------------

_TEX = {c: "\\" + c for c in "&%$#_{}"}
_TEX.update({"~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"})


def tex_escape(text: str) -> str:
    """Text safe in LaTeX: ``my_agent`` -> ``my\\_agent``."""
    return "".join(_TEX.get(c, c) for c in str(text))


def format_leaderboard_tex(results: Mapping) -> str:
    """``leaderboard.tex``: one booktabs ``table*`` per data set (needs ``\\usepackage{booktabs}``).

    Parameters
    ----------
    results:
        the content of ``results.json``.
    """
    settings = results["settings"]
    out = [
        "% navdtw suite leaderboard; needs \\usepackage{booktabs}. Rates in percent.",
        f"% Generated by navdtw {results['navdtw_version']}.",
    ]
    for name, ds in results["datasets"].items():
        metrics, rows = leaderboard_rows(ds, settings["alpha"])
        heads = []
        for m in metrics:
            info = metric_info(m)
            arrow = {True: r"$\uparrow$", False: r"$\downarrow$", None: ""}[info["higher_is_better"]]
            unit = r"\%" if info["rate"] else tex_escape(info["unit"])
            heads.append(tex_escape(info["label"]) + arrow + (f" ({unit})" if unit else ""))
        caption = (
            tex_escape(_caption(name, ds, settings))
            + ". "
            + tex_escape(_MARK_NOTE.format(dagger="DAGGER", alpha=settings["alpha"]))
            .replace("DAGGER", r"$^\dagger$")
            .replace(">=", r"$\geq$")
            .replace("Bold:", r"\textbf{Bold}:")
        )
        out += [
            "",
            r"\begin{table*}[t]",
            r"\centering",
            r"\small",
            r"\setlength{\tabcolsep}{3pt}",
            r"\begin{tabular}{l" + "r" * len(metrics) + "}",
            r"\toprule",
            "Agent & " + " & ".join(heads) + r" \\",
            r"\midrule",
        ]
        for k, (agent, cells) in enumerate(rows):
            if agent == BASELINE_ROW and ds.get("baseline") and k == len(rows) - 1:
                out.append(r"\midrule")
            line = [tex_escape(agent)]
            for m in metrics:
                if m not in cells:
                    line.append("")
                    continue
                mean, lo, hi, mark = cells[m]
                rate = metric_info(m)["rate"]
                text = _fmt(mean, rate)
                text = rf"\textbf{{{text}}}" if mark == "best" else rf"{text}$^\dagger$" if mark == "tied" else text
                if lo is not None or hi is not None:
                    text += rf" {{\scriptsize[{_fmt(lo, rate)}, {_fmt(hi, rate)}]}}"
                line.append(text)
            out.append(" & ".join(line) + r" \\")
        label = "".join(c if c.isalnum() else "-" for c in name)
        out += [
            r"\bottomrule",
            r"\end{tabular}",
            rf"\caption{{{caption}}}",
            rf"\label{{tab:navdtw-{label}}}",
            r"\end{table*}",
        ]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# HTML (notebooks: SuiteResults._repr_html_)
# --------------------------------------------------------------------------------------------


def format_leaderboard_html(results: Mapping) -> str:
    """The leaderboards as HTML tables, one per data set (means with intervals; the best mean in
    bold, ``†`` on the agents not significantly different from it), the marks' note and the
    failures. Every name and message is escaped. What Jupyter shows for a run's results.

    Parameters
    ----------
    results:
        the content of ``results.json``.
    """
    settings = results["settings"]
    parts = []
    for name, ds in results["datasets"].items():
        metrics, rows = leaderboard_rows(ds, settings["alpha"])
        body = []
        for agent, cells in rows:
            line = [f'<th style="text-align: left">{html.escape(agent)}</th>']
            for m in metrics:
                if m not in cells:
                    line.append("<td></td>")
                    continue
                mean, lo, hi, mark = cells[m]
                rate = metric_info(m)["rate"]
                text = html.escape(_fmt(mean, rate))
                text = f"<strong>{text}</strong>" if mark == "best" else f"{text}†" if mark == "tied" else text
                if lo is not None or hi is not None:  # the interval on a line of its own, under the mean
                    text += f" <br><small>[{html.escape(_fmt(lo, rate))}, {html.escape(_fmt(hi, rate))}]</small>"
                line.append(f'<td style="text-align: right; white-space: nowrap">{text}</td>')
            body.append("<tr>" + "".join(line) + "</tr>")
        head = "".join(f'<th style="text-align: right">{html.escape(_header(m))}</th>' for m in metrics)
        parts.append(
            "<table>"
            f"<caption>{html.escape(_caption(name, ds, settings))}</caption>"
            f'<thead><tr><th style="text-align: left">agent</th>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody>"
            "</table>"
        )
    parts.append(f"<p><small>{html.escape(_MARK_NOTE.format(dagger='†', alpha=settings['alpha']))}</small></p>")
    if results.get("failures"):
        items = "".join(f"<li>{html.escape(_failure_line(f))}</li>" for f in results["failures"])
        parts.append(f"<p>Failures:</p><ul>{items}</ul>")
    return "<div>" + "".join(parts) + "</div>"
