"""What every data set offers the scorer, the command line and suite runs: one shape for all.

A data set kind (:class:`DatasetKind`, registered in :data:`navdtw.datasets.DATASETS`) names the
files it needs as :class:`Option` records (they are the ``navdtw score --dataset NAME`` options and
the keys of a ``[datasets.X]`` table of a suite file), the conventions whose evaluators it
reproduces, and how to open the files. Opening reads the split and its graphs once and gives a
:class:`Benchmark`, which then matches and scores any number of agents' predictions::

    bench = navdtw.datasets.open("r2r", split="R2R_val_unseen.json", connectivity="connectivity")
    matched = bench.match("agent_val_unseen.json", convention="r2r")
    scores = bench.evaluate(matched, convention="r2r")

A new data set is one module that defines a :class:`Benchmark` subclass and a :class:`DatasetKind`
record, and one line in ``navdtw/datasets/__init__.py``.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._messages import named, shown
from ._common import MatchedEpisodes, not_found

__all__ = ["Benchmark", "DatasetKind", "Option"]


#: The shapes (:data:`navdtw.datasets.shapes.SHAPES`) each data set file option reads; a file of
#: another known shape given to it failed to read is named for what it is (``DatasetKind.open``).
_OPTION_SHAPES: dict[str, frozenset[str]] = {
    "split": frozenset({"r2r-split", "rxr-guide"}),
    "vlnce_episodes": frozenset({"vlnce-episodes"}),
    "rxrce_episodes": frozenset({"vlnce-episodes"}),
    "vlnce_gt": frozenset({"vlnce-gt"}),
    "rxrce_gt": frozenset({"vlnce-gt"}),
    "references": frozenset({"positions", "vlnce-predictions"}),
}
#: The option that reads each data set file's shape, for that message.
_SHAPE_OPTIONS = {
    "r2r-split": "--split",
    "rxr-guide": "--split (--dataset rxr)",
    "vlnce-episodes": "--vlnce-episodes (--rxrce-episodes for RxR-CE)",
    "vlnce-gt": "--vlnce-gt (--rxrce-gt for RxR-CE)",
}


@dataclass(frozen=True)
class Option:
    """One input of a data set kind: a ``navdtw score`` option and a suite-file key.

    Attributes
    ----------
    name:
        the suite key (``"split"``); the command-line flag is ``--`` + name with ``_`` as ``-``.
    help:
        one line for ``--help``.
    kind:
        ``"file"``, ``"dir"`` or ``"path"`` (a file or a folder) (paths, relative to the suite
        file in suite runs), ``"choice"``, ``"text"`` (any string) or ``"value"`` (a string,
        number, list or table that ``parse`` reads); :meth:`check` checks a value of any kind.
    required:
        whether the data set cannot be opened without it.
    choices, default:
        for ``"choice"`` options.
    parse:
        for ``"value"`` options: ``parse(value) -> value`` reads what a suite file, the command
        line or Python gave (and its own result again) or raises ``ValueError`` saying what is wrong.
    cli:
        for ``"value"`` options: the command-line flags, ``((flag, argparse keywords), ...)``, all
        writing this option (e.g. a repeatable ``--column NAME=METRIC``); the first is
        ``flag``. Empty: one flag ``--name`` taking a value.
    """

    name: str
    help: str
    kind: str = "file"
    required: bool = True
    choices: tuple[str, ...] = ()
    default: Any = None
    parse: Callable[[Any], Any] | None = field(default=None, compare=False, repr=False)
    cli: tuple[tuple[str, Mapping[str, Any]], ...] = field(default=(), compare=False, repr=False)

    @property
    def flag(self) -> str:
        return self.cli[0][0] if self.cli else "--" + self.name.replace("_", "-")

    def check(self, value) -> Any:
        """The option's one validator: ``value`` checked, as every caller takes it.

        :meth:`DatasetKind.open`, the suite file and the command line all call it, each putting
        only its own prefix before the message (the flag, ``--goal: ``, or the suite key,
        ``suite.toml: datasets.val.goal: ``), so one bad value reads the same wherever it is given.

        Parameters
        ----------
        value : object
            What a suite file, the command line or Python gave (not None); a suite file's paths
            are already resolved against its folder.

        Returns
        -------
        object
            The value: a :class:`~pathlib.Path` for ``"file"``, ``"dir"`` and ``"path"`` options;
            as ``parse`` reads it for ``"value"`` options; else as given.

        Raises
        ------
        ValueError
            A path or text that is not a string, a choice not among :attr:`choices`, or what
            ``parse`` refuses (naming the problem).
        FileNotFoundError
            A file or folder that does not exist (or a folder where a file is wanted, or the
            other way round).
        """
        if self.kind in ("file", "dir", "path"):
            if not isinstance(value, (str, os.PathLike)):
                raise ValueError(f"expected a string, got {type(value).__name__}")
            path = Path(value)
            if not {"file": path.is_file, "dir": path.is_dir, "path": path.exists}[self.kind]():
                raise FileNotFoundError(not_found(path, self.kind))
            return path
        if self.kind == "choice" and value not in self.choices:
            raise ValueError(f"must be one of {', '.join(self.choices)}, got {shown(value)}")
        if self.kind == "text" and not isinstance(value, str):
            raise ValueError(f"expected a string, got {type(value).__name__}")
        if self.kind == "value" and self.parse is not None:
            return self.parse(value)
        return value

    def read(self, value) -> Any:
        """Internal, for the command line until it calls :meth:`check`: that check.

        Parameters
        ----------
        value : object
            As :meth:`check`.

        Returns
        -------
        object
            As :meth:`check`.

        Raises
        ------
        ValueError, FileNotFoundError
            As :meth:`check`.
        """
        return self.check(value)


class Benchmark(ABC):
    """A data set's split read once (with its graphs and any annotations), ready to score agents.

    Attributes: ``kind`` (the :class:`DatasetKind`), ``inputs`` (the option values it was opened
    with; paths as absolute strings), ``n`` (number of episodes an agent is scored on under the default
    convention), ``graphs`` (the :class:`navdtw.GraphSet`, or ``None`` for continuous paths).
    """

    kind: DatasetKind
    inputs: dict[str, str]
    graphs: Any = None
    #: whether :meth:`match` takes ``partial=True``: the episodes that have a prediction so far are
    #: matched and the others left, for an evaluation still running (``navdtw watch``)
    matches_partial: bool = False

    @property
    @abstractmethod
    def n(self) -> int: ...

    @abstractmethod
    def match(self, predictions, *, convention: str | None = None, strict: bool = False) -> MatchedEpisodes:
        """Reads ``predictions`` (a file name or parsed JSON) and pairs them with the split's
        episodes as ``convention``'s evaluator does (which ids it scores, whether it collapses
        repeated viewpoints, which checks it makes).

        Parameters
        ----------
        predictions : str, os.PathLike or list
            A predictions file, or its parsed content.
        convention : str, optional
            One of the kind's :attr:`DatasetKind.conventions` (default: its default convention).
        strict : bool, optional
            Refuse a trajectory that does not start at its reference's start, for the kinds on a
            graph (default False; paths of positions are not checked).

        Returns
        -------
        MatchedEpisodes
            The episodes to score, ready for :meth:`evaluate`.

        Raises
        ------
        ValueError
            Bad input, naming the file and the entry; a convention the kind does not name.
        """

    def evaluate(self, matched: MatchedEpisodes, *, convention: str | None = None, **kwargs):
        """Every metric of this data set for ``matched``.

        Parameters
        ----------
        matched : MatchedEpisodes
            What :meth:`match` returned.
        convention : str, optional
            The convention to score under (default: the kind's default convention).
        **kwargs
            Passed to :func:`navdtw.evaluate` (``threshold``, ``workers``, ``metrics``).

        Returns
        -------
        navdtw.Scores
            One value per episode and metric.

        Raises
        ------
        ValueError, TypeError
            The errors of :func:`navdtw.evaluate` (an unknown convention or metric, a bad
            threshold).
        """
        return matched.evaluate(convention=convention or self.kind.default_convention, **kwargs)

    def baseline(self, n: int, *, seed: int = 0, convention: str | None = None, **kwargs) -> dict[str, float]:
        """Means of every metric over ``n`` random walks (the nDTW paper's random agent).

        Parameters
        ----------
        n : int
            Number of random walks, >= 1.
        seed : int, optional
            The walks depend only on the seed (default 0).
        convention : str, optional
            The convention to score under (default: the kind's default convention).
        **kwargs
            Passed to the random-walk scorer (``threshold``, ``workers``, ``chunk``, ``progress``).

        Returns
        -------
        dict[str, float]
            Metric name -> mean over the walks, rates as fractions.

        Raises
        ------
        NotImplementedError
            The kind has no random baseline (:attr:`DatasetKind.has_baseline` is False).
        ValueError, TypeError
            A convention the kind does not name, or the bad options of
            :func:`navdtw.baseline.score_random_walks` (``n``, ``seed``, ``threshold``, ``chunk``,
            ``workers``).
        """
        raise NotImplementedError(f"no random baseline for {self.kind.name}")


@dataclass(frozen=True)
class DatasetKind:
    """One data set kind: its name, its inputs, its evaluators' conventions, how to open it.

    Attributes
    ----------
    name:
        the kind's name (``"r2r"``), the key of :data:`navdtw.datasets.DATASETS`.
    title:
        the name readers know (``"R2R"``).
    options:
        its inputs (:class:`Option`), the ``navdtw score`` options and suite keys.
    conventions:
        the names of the evaluators' conventions it reproduces.
    default_convention:
        the convention used when none is given.
    opener:
        ``opener(**options) -> Benchmark``, the data set's :class:`Benchmark` subclass.
    id_name:
        the name of an episode id in its predictions (default ``"instr_id"``).
    description:
        one line for ``--help`` and the docs.
    reads_scores:
        the kind reads per-episode scores computed elsewhere (``results``): ``navdtw score`` does
        not apply (default ``False``).
    """

    name: str
    title: str
    options: tuple[Option, ...]
    conventions: tuple[str, ...]
    default_convention: str
    opener: Callable[..., Benchmark]
    id_name: str = "instr_id"
    description: str = ""
    reads_scores: bool = False

    @property
    def has_baseline(self) -> bool:
        """Whether the random-walk baseline applies (a graph to walk on)."""
        return getattr(self.opener, "baseline", Benchmark.baseline) is not Benchmark.baseline

    def open(self, **inputs) -> Benchmark:
        """Reads the data set's files (``open(split=..., connectivity=...)``).

        Parameters
        ----------
        **inputs
            The values of :attr:`options` by name (``None``: not given).

        Returns
        -------
        Benchmark
            The data set, read and checked; its ``inputs`` hold the values (paths absolute).

        Raises
        ------
        ValueError
            An unknown or missing option (naming it), a choice not among the option's choices, a
            value its ``parse`` refuses, or a malformed file (naming the file and the entry).
        FileNotFoundError
            A file or folder option that does not exist.
        """
        known = {o.name: o for o in self.options}
        unknown = sorted(set(inputs) - set(known))
        if unknown:
            raise ValueError(f"data set {self.name!r} takes {', '.join(sorted(known))}; unknown: {', '.join(unknown)}")
        values: dict[str, Any] = {}
        for name, opt in known.items():
            value = inputs.get(name)
            if value is None:
                if opt.required:
                    raise ValueError(f"data set {self.name!r} needs {name} ({opt.flag}): {opt.help}")
                value = opt.default
            else:
                try:
                    value = opt.check(value)
                except FileNotFoundError as exc:
                    raise FileNotFoundError(f"{opt.flag}: {exc}") from None
                except ValueError as exc:
                    raise ValueError(f"{opt.flag}: {exc}") from None
            values[name] = value
        try:
            bench = self.opener(**values)
        except ValueError as exc:
            message = self._misplaced(values)
            if message is None:
                raise
            raise ValueError(message) from exc
        bench.kind = self
        bench.inputs = {k: str(Path(v).resolve()) if isinstance(v, Path) else v for k, v in values.items() if v}
        return bench

    def _misplaced(self, values: Mapping[str, Any]) -> str | None:
        """For a data set whose files failed to read: the one-line message for a file given to the
        wrong option (an agent's predictions or results as the split, VLN-CE's ground truth as its
        episodes, a split as positions references), recognised by its shape; None when every
        file has the shape its option reads, or one it does not know (the reader's message stands)."""
        from .shapes import sniff

        if self.name == "results":  # its split may be any kind's (dataset_kind says which)
            return None
        for opt in self.options:
            wanted = _OPTION_SHAPES.get(opt.name)
            path = values.get(opt.name)
            if wanted is None or not isinstance(path, Path) or not path.is_file():
                continue
            shape = sniff(path)
            if shape is None or shape.name in wanted:
                continue
            if shape.name in _SHAPE_OPTIONS:
                hint = f"give it as {_SHAPE_OPTIONS[shape.name]}"
            else:
                hint = "an agent's output: give it as --predictions" if shape.kinds else shape.advice
            return f"{opt.flag} {named(path.name)} holds {shape.what}, not {opt.help}; {hint}"
        return None

    def check_convention(self, convention: str | None) -> str:
        """The convention to use.

        Parameters
        ----------
        convention : str or None
            A convention name, or None for :attr:`default_convention`.

        Returns
        -------
        str
            The convention.

        Raises
        ------
        ValueError
            A convention not in :attr:`conventions`.
        """
        if convention is None:
            return self.default_convention
        if convention not in self.conventions:
            raise ValueError(
                f"convention {convention!r} does not apply to {self.name} data; choose one of "
                f"{', '.join(self.conventions)}"
            )
        return convention
