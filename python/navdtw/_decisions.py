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
