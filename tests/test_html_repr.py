"""Notebook display: ``Scores.summary()`` (navdtw.Summary) and a suite run's results
(navdtw.suite.SuiteResults) are dicts that Jupyter shows as HTML tables (``_repr_html_``), with
each metric's label and unit from the registry and every name escaped."""

from __future__ import annotations

import copy
import json
import pickle
from html.parser import HTMLParser

import numpy as np
import pytest

import navdtw
from navdtw.suite import SuiteResults

HOSTILE = '<script>alert("x")</script> & <img src=x onerror=alert(1)>'


class Tables(HTMLParser):
    """The tables of an HTML fragment: rows of cell texts, and every tag seen."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.captions: list[str] = []
        self.tags: list[str] = []
        self.bold: list[str] = []
        self._cell: list[str] | None = None
        self._caption: list[str] | None = None
        self._in_bold = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "caption":
            self._caption = []
        elif tag == "strong":
            self._in_bold = True

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "caption":
            self.captions.append("".join(self._caption))
            self._caption = None
        elif tag == "strong":
            self._in_bold = False

    def handle_data(self, data):
        for part in (self._cell, self._caption):
            if part is not None:
                part.append(data)
        if self._in_bold:
            self.bold.append(data)


# --------------------------------------------------------------------------------------------
# Scores.summary()
# --------------------------------------------------------------------------------------------

GRID = np.array([[0, 1, 2, 3], [1, 0, 1, 2], [2, 1, 0, 1], [3, 2, 1, 0]], np.float32)


@pytest.fixture
def scores():
    refs = [[0, 1, 2], [0, 1, 2, 3], [3, 2]]
    qrys = [[0, 1], [0, 1, 2, 3], [3, 2, 1, 0]]
    return navdtw.evaluate(refs, qrys, distances=GRID)


def test_summary_is_the_same_dict(scores):
    s = scores.summary()
    assert isinstance(s, navdtw.Summary) and isinstance(s, dict)
    plain = {k: float(np.mean(scores[k])) for k in scores}
    assert s == plain and plain == s
    assert json.loads(json.dumps(s)) == plain
    assert s["sr"] == plain["sr"] and list(s) == list(plain)
    assert pickle.loads(pickle.dumps(s)) == s and copy.deepcopy(s) == s


def test_summary_html_has_labels_units_and_percent(scores):
    s = scores.summary()
    t = Tables(s._repr_html_())
    (table,) = t.tables
    labels, units, row = table
    records = [navdtw.registry.get(k) for k in s]
    assert labels == ["", *(m.label for m in records)]
    assert units == ["", *("%" if m.rate else m.unit for m in records)]
    assert row[0] == "mean"
    shown = dict(zip(s, row[1:]))
    assert shown["sr"] == f"{s['sr'] * 100:.2f}" and shown["ne"] == f"{s['ne']:.2f}"
    # percent=True: the rates are already in percent and shown as they are
    p = scores.summary(percent=True)
    assert dict(zip(p, Tables(p._repr_html_()).tables[0][2][1:])) == shown


def test_grouped_summary_html_escapes_labels(scores):
    s = scores.summary(by=[HOSTILE, "b", HOSTILE])
    assert s == {"all": scores.summary(), HOSTILE: s[HOSTILE], "b": s["b"]}
    text = s._repr_html_()
    t = Tables(text)
    assert [r[0] for r in t.tables[0][2:]] == ["all", HOSTILE, "b"]
    assert "script" not in t.tags and "img" not in t.tags and "<script>" not in text


# --------------------------------------------------------------------------------------------
# a suite run's results
# --------------------------------------------------------------------------------------------


def _results(agent: str = "mine") -> SuiteResults:
    """results.json of a run with two agents and a baseline on one data set."""

    def v(mean, lo, hi, p=None):  # p: the comparisons with the best (metrics with marks)
        best = {} if p is None else {"vs_best": {"p": p, "p_bounds": [p, p], "resamples": 1000}}
        return {"mean": mean, "ci": [lo, hi], **best}

    return SuiteResults(
        navdtw_version=navdtw.__version__,
        settings={**navdtw.suite.DEFAULT_SETTINGS, "resamples": 1000},
        datasets={
            "r2r_unseen": {
                "dataset": "r2r",
                "convention": "r2r",
                "n": 100,
                "threshold": 3.0,
                "agents": {
                    agent: {"sr": v(0.6, 0.55, 0.65, 1.0), "ne": v(4.0, 3.5, 4.5, 1.0), "pl": v(10.0, 9.0, 11.0)},
                    "other": {"sr": v(0.3, 0.25, 0.35, 0.002), "ne": v(6.0, 5.5, 6.5, 0.002), "pl": v(9.0, 8.0, 10.0)},
                },
                "baseline": {"sr": {"mean": 0.02}, "ne": {"mean": 9.0}, "pl": {"mean": 8.0}},
                "comparisons": [
                    {"a": agent, "b": "other", "metric": m, "diff": 0.0, "ci": [0, 0], "p": 0.001, "p_holm": 0.002}
                    for m in ("sr", "ne", "pl")
                ],
                "resampling": "path",
            }
        },
        failures=[{"agent": agent, "dataset": "r2r_val_seen", "file": "x.json", "error": f"bad {HOSTILE}"}],
    )


def test_results_html_is_the_leaderboard():
    r = _results()
    assert json.loads(json.dumps(r)) == r and isinstance(r, dict)
    t = Tables(r._repr_html_())
    (table,) = t.tables
    assert table[0] == ["agent", "SR↑ (%)", "NE↓ (m)", "PL (m)"]
    assert table[1] == ["mine", "60.0 [55.0, 65.0]", "4.00 [3.50, 4.50]", "10.00 [9.00, 11.00]"]
    assert table[2] == ["other", "30.0 [25.0, 35.0]", "6.00 [5.50, 6.50]", "9.00 [8.00, 10.00]"]
    assert table[3] == ["random walk", "2.0", "9.00", "8.00"]
    assert t.bold == ["60.0", "4.00"]  # the best mean of each metric with a direction
    assert t.captions[0].startswith("r2r_unseen: r2r, convention r2r, 100 episodes; means with 95% BCa")


def test_results_html_escapes_hostile_names():
    r = _results(HOSTILE)
    text = r._repr_html_()
    t = Tables(text)
    assert t.tables[0][1][0] == HOSTILE
    assert "script" not in t.tags and "img" not in t.tags and "<script>" not in text
    assert HOSTILE in text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
