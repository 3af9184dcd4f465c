"""A folder followed by ``navdtw watch`` is not listed again when the kernel tells the names added
(navdtw._dirwatch, Linux inotify; issue 36 item 4: listing 11,000 names costs ~3.5 ms a look);
any change the events do not explain (none, a name removed, a network file system written by
another machine) lists the folder whole, so the files are always those files_of gives."""

from __future__ import annotations

import os
import sys

import pytest

from navdtw import _dirwatch
from navdtw.datasets.results import shards
from navdtw.datasets.results.shards import Listing, files_of

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


@linux
def test_the_events_tell_the_names_added_and_give_up_on_a_removal(tmp_path):
    events = _dirwatch.open_events(tmp_path)
    assert events is not None
    assert events.added() == []
    (tmp_path / "a.json").write_text("{}")
    (tmp_path / "b.json").write_text("{}")
    assert events.added() == ["a.json", "b.json"]
    assert events.added() == []
    (tmp_path / "c.tmp").write_text("{}")  # written aside, then renamed: only the name it ends with
    os.replace(tmp_path / "c.tmp", tmp_path / "c.json")
    assert events.added() == ["c.json"]
    (tmp_path / "a.json").unlink()
    assert events.added() is None  # a name that was there is gone: the folder is listed whole
    events.close()


def test_no_events_where_there_is_no_inotify(tmp_path, monkeypatch):
    monkeypatch.setenv("NAVDTW_NO_INOTIFY", "1")
    assert _dirwatch.open_events(tmp_path) is None
    monkeypatch.delenv("NAVDTW_NO_INOTIFY")
    assert _dirwatch.open_events(tmp_path / "not-there") is None


def _count_listings(monkeypatch) -> list[int]:
    calls = [0]
    listdir = os.listdir

    def counted(path):
        calls[0] += 1
        return listdir(path)

    monkeypatch.setattr(shards.os, "listdir", counted)
    return calls


@linux
def test_a_folder_told_of_its_files_added_is_not_listed_again(tmp_path, monkeypatch):
    log = tmp_path / "log"
    log.mkdir()
    for k in range(3):
        (log / f"stats_{k}.json").write_text("{}")
    listing = Listing(log)
    calls = _count_listings(monkeypatch)

    def files():  # the listing's files, and how many times it listed the folder
        before = calls[0]
        got = listing.files()
        listed = calls[0] - before
        assert got == files_of(log)
        return listed

    assert files() == 1
    (log / "stats_7.json").write_text("{}")
    (log / ".hidden").write_text("{}")
    assert files() == 0  # told, not listed
    assert [p.name for p in listing.added] == ["stats_7.json"]
    (log / "stats_0.json").unlink()  # a removal: listed whole
    assert files() == 1 and listing.removed


@pytest.mark.parametrize("events", ["inotify", "none", "silent"])
def test_a_listing_gives_what_files_of_gives_with_or_without_events(tmp_path, monkeypatch, events):
    """none: no inotify (not Linux); silent: events that never come (a network file system written
    by another machine): every change is then found by listing the folder."""
    if events == "none":
        monkeypatch.setattr(shards, "open_events", lambda folder: None)
    elif events == "silent":

        class Silent:
            def added(self):
                return []

        monkeypatch.setattr(shards, "open_events", lambda folder: Silent())
    elif not sys.platform.startswith("linux"):
        pytest.skip("inotify is Linux's")
    log = tmp_path / "log"
    log.mkdir()
    (log / "stats_0.json").write_text("{}")
    listing = Listing(log)
    assert listing.files() == files_of(log)
    for k in range(1, 4):
        (log / f"stats_{k}.json").write_text("{}")
        assert listing.files() == files_of(log) and [p.name for p in listing.added] == [f"stats_{k}.json"]
    (log / "sub").mkdir()  # a subfolder: not a file of the run
    assert listing.files() == files_of(log) and listing.added == []
    (log / "stats_1.json").unlink()
    assert listing.files() == files_of(log)
    (log / "x_r0_w2.json").write_text("{}")  # one rank of two: named as files_of names it
    with pytest.raises(ValueError, match="rank 1"):
        listing.files()


@linux
def test_a_folder_is_listed_whole_every_relist_seconds(tmp_path, monkeypatch):
    """The events are a hint: a file written by another machine is found by the next listing."""
    log = tmp_path / "log"
    log.mkdir()
    (log / "stats_0.json").write_text("{}")
    listing = Listing(log)
    listing.files()
    calls = _count_listings(monkeypatch)
    (log / "stats_1.json").write_text("{}")
    listing.files()
    assert calls[0] == 0
    listing.RELIST = 0.0
    (log / "stats_2.json").write_text("{}")
    got = listing.files()
    assert calls[0] == 1 and got == files_of(log)
