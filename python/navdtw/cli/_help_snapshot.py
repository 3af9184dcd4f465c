"""Internal to :mod:`navdtw.cli`: ``--help`` of the commands whose options are the data set kinds'
and the metric registry's (``score``, ``baseline``, ``compare``), answered from a record of their
options instead of from the kinds (which import numpy: 0.15-0.5 s for a help text).

The record (:data:`navdtw.cli._help_data.HELP`) is what :func:`record` reads from the parser the
command builds: each option's flags, action, choices, metavar, default and help, in their groups,
and the description and epilog. ``tests/test_cli_help_snapshot.py`` checks it is the parser's;
after a change of these commands' options, a kind's options or the metrics, write it again with
``python -m navdtw.cli._help_snapshot``.
"""

from __future__ import annotations

import argparse
import pprint
import sys
from pathlib import Path
from typing import Any

#: The commands answered from the record when the command line asks for ``--help``.
COMMANDS = ("score", "baseline", "compare")

# argparse's action classes, by the name add_argument takes (the help needs no other)
_ACTIONS = {
    "_StoreAction": "store",
    "_StoreTrueAction": "store_true",
    "_StoreFalseAction": "store_false",
    "_StoreConstAction": "store_const",
    "_AppendAction": "append",
    "_AppendConstAction": "append_const",
    "_CountAction": "count",
}
# what each action takes besides the flags, the dest and the help
_TAKES = {
    "store": ("nargs", "const", "default", "choices", "required", "metavar"),
    "append": ("nargs", "const", "default", "choices", "required", "metavar"),
    "store_true": ("default", "required"),
    "store_false": ("default", "required"),
    "store_const": ("const", "default", "required", "metavar"),
    "append_const": ("const", "default", "required", "metavar"),
    "count": ("default", "required"),
}


def record(parser: argparse.ArgumentParser) -> dict[str, Any]:
    """The options of ``parser`` as plain data (what :func:`replay` builds again).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        A command's parser, its options added.

    Returns
    -------
    dict
        ``description``, ``epilog`` and ``groups``: each a title, a description and its options.

    Raises
    ------
    ValueError
        An option the record cannot hold (an action of its own class, a mutually exclusive group).
    """
    if parser._mutually_exclusive_groups:
        raise ValueError("a mutually exclusive group: not recorded")
    groups = []
    for group in parser._action_groups:
        options = []
        for action in group._group_actions:
            kind = type(action).__name__
            if kind == "_HelpAction":
                continue
            if kind not in _ACTIONS:
                raise ValueError(f"{action.dest}: an action of its own class ({kind}): not recorded")
            name = _ACTIONS[kind]
            spec: dict[str, Any] = {"flags": list(action.option_strings), "dest": action.dest, "action": name}
            for key in _TAKES[name]:
                value = getattr(action, key)
                if key == "choices" and value is not None:
                    value = list(value)
                if key == "const" and name in ("store", "append") and action.nargs != "?":
                    continue
                spec[key] = value
            spec["help"] = action.help
            options.append(spec)
        groups.append({"title": group.title, "description": group.description, "options": options})
    return {"description": parser.description, "epilog": parser.epilog, "groups": groups}


def replay(parser: argparse.ArgumentParser, data: dict[str, Any]) -> None:
    """Adds the recorded options to ``parser`` (their types are not checked: it only shows help).

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The command's parser, without its options.
    data : dict
        From :func:`record`.
    """
    parser.description, parser.epilog = data["description"], data["epilog"]
    own = {g.title: g for g in parser._action_groups}
    for group in data["groups"]:
        target = own.get(group["title"]) or parser.add_argument_group(group["title"], group["description"])
        for spec in group["options"]:
            spec = dict(spec)
            flags, dest = spec.pop("flags"), spec.pop("dest")
            if flags:
                target.add_argument(*flags, dest=dest, **spec)
            else:
                spec.pop("required", None)  # a positional's follows from its nargs
                target.add_argument(dest, **spec)


def snapshot() -> dict[str, dict[str, Any]]:
    """The record of each command of :data:`COMMANDS`, from the parsers they build now.

    Returns
    -------
    dict
    """
    from .commands import load

    out = {}
    for name in COMMANDS:
        parser = argparse.ArgumentParser(prog=f"navdtw {name}", formatter_class=argparse.RawDescriptionHelpFormatter)
        load(name).add_arguments(parser, help_only=False)
        out[name] = record(parser)
    return out


def write(path: Path | None = None) -> Path:
    """Writes :func:`snapshot` as ``navdtw/cli/_help_data.py``.

    Parameters
    ----------
    path : Path, optional
        Where (default: beside this module).

    Returns
    -------
    Path
    """
    path = path or Path(__file__).with_name("_help_data.py")
    text = (
        '"""Internal to :mod:`navdtw.cli`: the options of ``navdtw score``, ``baseline`` and ``compare``, as\n'
        "their ``--help`` shows them (:mod:`navdtw.cli._help_snapshot`). Written by\n"
        '``python -m navdtw.cli._help_snapshot``: do not edit."""\n\n'
        "# ruff: noqa: E501\n"
        "# fmt: off\n"
        f"HELP = {pprint.pformat(snapshot(), width=1000, sort_dicts=False)}\n"
    )
    path.write_text(text, encoding="utf-8")
    return path


if __name__ == "__main__":  # pragma: no cover - a maintainer's command
    print(f"wrote {write()}", file=sys.stderr)
