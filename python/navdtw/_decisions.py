"""The decisions of ``navdtw watch`` and their exit statuses: one table, read by navdtw.watch and by
the command's exit-status list (navdtw.cli, docs/cli.md). No imports, so ``navdtw --help`` stays
light."""

from __future__ import annotations

#: decision -> (exit status of ``navdtw watch``, what it means).
DECISIONS: dict[str, tuple[int, str]] = {
    "undecided": (4, "watch: not decided yet (--once, --idle without new results, or the split ended undecided)"),
    "width": (10, "watch --width: every chosen metric's split mean is known to the width"),
    "reported-inside": (11, "watch --reported: every reported figure is inside its interval, at the width"),
    "reported-outside": (12, "watch --reported: a reported figure is outside its interval"),
    "better": (13, "watch --against: better on a metric, worse on none"),
    "worse": (14, "watch --against: worse on a metric, better on none"),
    "mixed": (15, "watch --against: better on one metric, worse on another"),
    "tied": (16, "watch --against: every chosen metric's difference is within the width of 0"),
    "chosen": (17, "watch with checkpoints: one remains, the others are eliminated"),
    "tied-checkpoints": (18, "watch with checkpoints: the ones remaining cannot be told apart at the width"),
}

#: How many of a run's ids that are not episodes of the order ``navdtw watch`` reports and goes on
#: with (an evaluator's stray extra episodes); one more, or a run none of whose ids is in the order,
#: stops it with :class:`navdtw.watch.NotInOrder`, exit status 19 (results of another split, an
#: order of another data set, ids off by one: a decision would be on the wrong population).
FOREIGN_LIMIT = 10

#: ``navdtw.order.off_by_one`` and the start check of trajectories: the fewest integer ids judged,
#: and the share of them that must fit the neighbouring episodes (id minus or plus one) to say
#: the ids are off by one (false alarms on real runs: benchmarks/bench_off_by_one.py).
OFF_BY_ONE_MIN = 20
OFF_BY_ONE_SHARE = 0.8

#: The exit status of a ``navdtw watch`` ended by Ctrl-C (the ``exit_status`` of the state it writes).
INTERRUPTED = 130


class Figure(float):
    """A reported figure as written: its value (rates as fractions) and ``half``, half a unit of
    its last digit in the same unit (``0.598``: 0.0005; ``59.8%``: 0.05 points, 0.0005 as a
    fraction; a number computed by an evaluator, written to full precision: about 1e-17)."""

    half: float

    def __new__(cls, value: float, half: float = 0.0) -> Figure:
        self = super().__new__(cls, value)
        self.half = float(half)
        return self

    def __reduce__(self):
        return (Figure, (float(self), self.half))


def rounding_of(text: str) -> float:
    """Half a unit of the last digit of a number as written (``"0.598"``: 0.0005, ``"60"``: 0.5,
    ``"5e-1"``: 0.05): the figure stands for every value that rounds to it."""
    mantissa, _, exponent = text.strip().lower().partition("e")
    decimals = len(mantissa.partition(".")[2]) - (int(exponent) if exponent else 0)
    return 0.5 * 10.0**-decimals


def reported_inside(figure: float, lower: float, upper: float) -> bool:
    """The one rule by which ``navdtw watch --reported`` and ``navdtw compare --reported`` judge a
    reported figure against an interval [lower, upper]: a figure given to k decimals stands for
    [x - 0.5e-k, x + 0.5e-k] (:class:`Figure`'s ``half``; 0 for a plain float), and is inside when
    that range meets the interval, outside only when it misses it (docs/statistics.md)."""
    half = getattr(figure, "half", 0.0) + 1e-12 * max(1.0, abs(figure))  # and the float rounding of x +- half
    return figure - half <= upper and figure + half >= lower
