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

#: The exit status of a ``navdtw watch`` ended by Ctrl-C (the ``exit_status`` of the state it writes).
INTERRUPTED = 130
