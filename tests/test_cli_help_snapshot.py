"""``navdtw score``, ``compare`` and ``baseline --help`` answer from a record of their options
(navdtw.cli._help_data, written by ``python -m navdtw.cli._help_snapshot``), so that they import
no numpy; the record must be what the commands' parsers hold now."""

from __future__ import annotations

import argparse
import ast

import pytest

from navdtw.cli import _help_snapshot
from navdtw.cli._help_data import HELP


def test_the_record_is_what_the_commands_parsers_hold():
    now = _help_snapshot.snapshot()
    assert set(now) == set(HELP) == set(_help_snapshot.COMMANDS)
    for name in now:
        assert now[name] == HELP[name], (
            f"navdtw {name}'s options changed: write the record again with python -m navdtw.cli._help_snapshot"
        )
    assert ast.literal_eval(repr(HELP)) == HELP  # plain data: the module imports nothing


def _parser():
    p = argparse.ArgumentParser(prog="x", formatter_class=argparse.RawDescriptionHelpFormatter)
    p.description, p.epilog = "what it does", "Example:\n  x a --n 3\n"
    p.add_argument("files", nargs="+", metavar="FILE", help="the files")
    p.add_argument("--n", type=int, default=3, help="how many (default %(default)s)")
    p.add_argument("--kind", choices=["a", "b"], required=True)
    p.add_argument("--flag", action="store_true", help="a flag")
    p.add_argument("--no-x", dest="x", action="store_false")
    p.add_argument("--opt", nargs="?", const="c", default=None, metavar="V")
    p.add_argument("--many", action="append", default=[], metavar="M")
    p.add_argument("--fast", dest="speed", action="store_const", const=2)
    p.add_argument("-v", action="count", default=0)
    g = p.add_argument_group("data set options", "a paragraph")
    g.add_argument("--split", metavar="FILE", help="the split")
    return p


def test_a_replayed_record_shows_the_same_help():
    p = _parser()
    data = _help_snapshot.record(p)
    q = argparse.ArgumentParser(prog="x", formatter_class=argparse.RawDescriptionHelpFormatter)
    _help_snapshot.replay(q, data)
    assert q.format_help() == p.format_help()
    assert _help_snapshot.record(q) == data


def test_what_the_record_cannot_hold_is_refused():
    p = _parser()
    p.add_mutually_exclusive_group().add_argument("--a", action="store_true")
    with pytest.raises(ValueError, match="mutually exclusive"):
        _help_snapshot.record(p)

    class Own(argparse.Action):
        def __call__(self, *args):
            pass

    p = _parser()
    p.add_argument("--own", action=Own)
    with pytest.raises(ValueError, match="own: an action of its own class"):
        _help_snapshot.record(p)
