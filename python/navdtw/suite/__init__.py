"""Benchmark-suite runs: many agents on many data sets, compared with intervals and paired tests.

A suite file (TOML) names the data sets and the agents' predictions; :func:`run` scores every
(agent, data set) pair with every metric, adds each data set's random-walk baseline, computes
bootstrap intervals and paired tests (:mod:`navdtw.stats`) and writes the leaderboards
(``leaderboard.md``, ``.csv``, ``.tex``), ``results.json``, the per-episode values
(``episodes.parquet``, or ``episodes.csv`` without pyarrow) and ``report.html``. See docs/suite.md.

::

    metrics = ["sr", "spl", "ndtw"]          # optional: the metrics reported (default: all)
    latex = "intervals"                      # optional: or "compact" (leaderboard.tex)

    [datasets.r2r_unseen]
    dataset = "r2r"                          # a kind of navdtw.datasets.DATASETS
    split = "data/R2R_val_unseen.json"       # the kind's options; paths relative to this file
    connectivity = "data/connectivity"
    convention = "r2r"                       # optional (the kind's default)
    threshold = 3.0                          # optional (the convention's, else 3.0 m)

    [agents.mine]
    r2r_unseen = "runs/mine_val_unseen.json"     # or a list / glob of files, one per run (seed)

    [agents.mine.reported]                       # optional: the paper's figures, checked
    r2r_unseen = {sr = 0.558, spl = "51.2%"}     # fractions, or percentages with %

    [settings]                               # optional; these are the defaults
    resamples = 10000
    seed = 0
    confidence = 0.95
    method = "bca"                           # or "percentile"
    alpha = 0.05                             # level of the dagger (cannot be told apart from the best)
    baseline_walks = 100000                  # 0: no baseline row
    cluster = "path"                         # or "episode"
    workers = -1
    episodes = "same"                        # or "shared": compare on the episodes all agents have
    min_units = 10                           # paths (or episodes) an interval needs

One module per concern (docs/design.md):

* :mod:`~navdtw.suite.config`: the suite file (TOML), checked: :func:`load_suite`, :class:`Suite`.
* :mod:`~navdtw.suite.runner`: :func:`run` and :func:`compare`, the order of the stages below.
* :mod:`~navdtw.suite.scoring`: matching and scoring every agent on one data set.
* :mod:`~navdtw.suite.baselines`: each data set's random-walk baseline, cached.
* :mod:`~navdtw.suite.clusters`: which episodes share a path (the path bootstrap).
* :mod:`~navdtw.suite.analysis`: the statistics of one data set (:mod:`navdtw.stats`).
* :mod:`~navdtw.suite.marks`: the best agent and those that cannot be told apart from it.
* :mod:`~navdtw.suite.tables`: the leaderboards as text, Markdown, CSV, LaTeX and HTML.
* :mod:`~navdtw.suite.outputs`: every file a run writes; :mod:`~navdtw.suite.report_data`: what
  ``report.html`` shows.
* :mod:`~navdtw.suite.results`: :class:`SuiteResults`, what :func:`run` returns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:  # type checkers see the lazy names as plain imports
    from .._io import OutputError as OutputError
    from .clusters import CLUSTER_RULES as CLUSTER_RULES
    from .clusters import cluster_labels as cluster_labels
    from .config import DEFAULT_SETTINGS as DEFAULT_SETTINGS
    from .config import LATEX_FORMS as LATEX_FORMS
    from .config import DatasetSpec as DatasetSpec
    from .config import Suite as Suite
    from .config import SuiteError as SuiteError
    from .config import load_suite as load_suite
    from .marks import leaderboard_marks as leaderboard_marks
    from .marks import metric_info as metric_info
    from .outputs import OUTPUTS as OUTPUTS
    from .results import SuiteResults as SuiteResults
    from .runner import compare as compare
    from .runner import run as run
    from .tables import format_leaderboard as format_leaderboard
    from .tables import format_leaderboard_md as format_leaderboard_md
    from .tables import format_leaderboard_tex as format_leaderboard_tex
    from .tables import tex_escape as tex_escape

#: Each name and the module it lives in, imported on first touch (PEP 562), as ``navdtw`` does: the
#: command's options (``LATEX_FORMS``) then need no scipy.stats, which the statistics import.
_NAMES = {
    "OutputError": "navdtw._io",
    **dict.fromkeys(("CLUSTER_RULES", "cluster_labels"), ".clusters"),
    **dict.fromkeys(("DEFAULT_SETTINGS", "LATEX_FORMS", "DatasetSpec", "Suite", "SuiteError", "load_suite"), ".config"),
    **dict.fromkeys(("leaderboard_marks", "metric_info"), ".marks"),
    "OUTPUTS": ".outputs",
    "SuiteResults": ".results",
    **dict.fromkeys(("compare", "run"), ".runner"),
    **dict.fromkeys(("format_leaderboard", "format_leaderboard_md", "format_leaderboard_tex", "tex_escape"), ".tables"),
}


__getattr__, __dir__ = lazy_names(globals(), _NAMES)
del lazy_names  # not a name of the package


# The names above imported "as" themselves were module attributes of the single-file navdtw.suite of
# 0.2's development; their homes are the submodules now.
__all__ = [
    "DEFAULT_SETTINGS",
    "LATEX_FORMS",
    "DatasetSpec",
    "OutputError",
    "Suite",
    "SuiteError",
    "SuiteResults",
    "cluster_labels",
    "compare",
    "format_leaderboard",
    "leaderboard_marks",
    "load_suite",
    "metric_info",
    "run",
]
