"""Results tables: per-episode metrics that another evaluator computed (VLN-CE and the habitat loops
built on it, HA-VLN, VLN-DUET / HAMT, CVDN, aerial VLN, ...), and navdtw's own ``episodes.csv`` /
``episodes.parquet``, read for comparison (``navdtw compare ... --dataset results``, suite files
with ``dataset = "results"``).

Formats (found from the content, gzipped or not): JSON Lines (one object per episode), a JSON list
of objects, a JSON object keyed by episode id (habitat's ``{episode_id: {metric: value}}``), CSV
(TSV for ``.tsv`` names or tab-separated headers) and Parquet (needs pyarrow). JSON's non-standard
``NaN``, ``Infinity`` and ``-Infinity`` tokens (what Python's json writes) are read; nested objects
are flattened (VLN-CE's ``{"collisions": {"count": 2}}`` is the column ``collisions.count``).

Projects' files are read as their code writes them: :mod:`navdtw.datasets.results.layouts` describes each
layout (ETPNav's per-rank files, StreamVLN's summary line, InternNav's progress and means, NaVid's
file per episode, AerialVLN's per-row threshold, the means-only files of VLN-CE and HA-VLN), and
:mod:`navdtw.datasets.results.shards` gathers one run's files (ranks, a folder, a glob, a list). An
evaluator's summary record is left out of the episodes and cross-checked (``ResultsTable.checks``);
a means file is read by :func:`load_means` as the evaluator's reported figures.

Columns:

* the id column: ``id_column``, else the first of :data:`ID_COLUMNS`; ids are strings (``12`` and
  ``"12"`` are the same episode, as the evaluators compare them);
* metric columns: a column named as a registry metric (any case: ``nDTW``) or one of its
  :data:`ALIASES` (the evaluators' own names: ``distance_to_goal``, ``nav_error``, ``oracle_success``,
  ...), or mapped by ``columns`` (``{"Oracle SR": "osr"}``); known columns that are not registry
  metrics (:data:`EXTRA_COLUMNS`: ``steps``, HA-VLN's ``TCR`` and ``CR``, ...);
* other numeric columns are kept under their own names and compared, with no better/worse direction
  unless ``columns`` gives one (``{"collisions.count": "-"}``); text columns (instructions, scene
  ids) are ignored; ``columns`` maps a column to ``"ignore"`` to leave it out;
* ``scan`` / ``scene_id`` gives the scans, ``language`` the groups, ``path_id`` / ``trajectory_id``
  (or ``path_column``) the path of each episode for the path bootstrap.

Checks (a ``ValueError`` naming the file, the entry and the column): rates (SR, SPL, nDTW, ...)
must be fractions in [0, 1] (values in (1, 100] are percentages: ``percent``); distances must not be
negative; an id must appear once; NaN (or a missing value) and infinities follow navdtw's one
non-finite policy (:func:`navdtw.registry.nonfinite_policy`): 0 where the metric's formula says so
(SPL, SDTW and SED where success is 0, RGSPL where RGS is 0), an error anywhere else; ``+inf``
distances (an unreachable goal) are kept as read for the statistics to leave out.

The package (docs/design.md): the public names are re-exported here from internal modules, each
with one concern: ``_columns`` (column names, aliases, the ``columns`` / ``percent`` / ``select``
options), ``_readers`` (the formats, one run's files, summary records), ``_cells`` (cell values:
numbers, ids, text), ``_build`` (the steps from the raw columns to a table), ``_table``
(:class:`ResultsTable`, :func:`load_results`, :func:`align`), ``_means`` (:func:`load_means`),
and ``_kind`` (the data set kind, which checks a table against the split that its ``dataset_kind``
reads: ``DatasetKind.split_index``); :mod:`~navdtw.datasets.results.layouts` and
:mod:`~navdtw.datasets.results.shards` are public.
"""

from __future__ import annotations

# GROUP_COLUMNS, PATH_COLUMNS, SCAN_COLUMNS and id_shape_clusters: the module's
# other names before it was a package, kept (internal: not in __all__)
from . import layouts as layouts
from . import shards as shards
from ._columns import ALIASES, EXTERNAL, EXTRA_COLUMNS, ID_COLUMNS, parse_columns, parse_percent, parse_select
from ._columns import GROUP_COLUMNS as GROUP_COLUMNS
from ._columns import PATH_COLUMNS as PATH_COLUMNS
from ._columns import SCAN_COLUMNS as SCAN_COLUMNS
from ._kind import RESULTS, ResultsBenchmark
from ._kind import id_shape_clusters as id_shape_clusters
from ._means import EvaluatorMeans, load_means
from ._table import ResultsTable, align, load_results

__all__ = [
    "ALIASES",
    "EXTERNAL",
    "EXTRA_COLUMNS",
    "ID_COLUMNS",
    "RESULTS",
    "EvaluatorMeans",
    "ResultsBenchmark",
    "ResultsTable",
    "align",
    "load_means",
    "load_results",
    "parse_columns",
    "parse_percent",
    "parse_select",
]
