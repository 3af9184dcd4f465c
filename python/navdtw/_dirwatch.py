"""Internal (``navdtw watch``): the names a folder gained since the last look, told by the kernel
(Linux ``inotify``) instead of found by listing the folder again (issue 36, item 4: listing a
folder of 11,000 files costs ~3.5 ms of kernel time a look; the events of one new file cost a
read). Where the kernel cannot tell (not Linux, no inotify, its limits reached), :func:`open_events`
gives None and the folder is listed as before.

The events are a hint, never the only source: they say nothing of a file written by another
machine on a network file system, and a queue that overflowed loses some. So
:class:`~navdtw.datasets.results.shards.Listing` trusts them only when the folder changed (its
modification time) and they name files added, and only names added (a name removed, an
overflow, the folder itself moved: the folder is listed whole); a change the events do not
explain (no event) lists the folder whole, as before.
"""

from __future__ import annotations

import contextlib
import os
import struct
import sys
import weakref
from typing import Any

__all__ = ["DirEvents", "open_events"]

# <sys/inotify.h>
_IN_MOVED_FROM = 0x00000040
_IN_MOVED_TO = 0x00000080
_IN_CREATE = 0x00000100
_IN_DELETE = 0x00000200
_IN_DELETE_SELF = 0x00000400
_IN_MOVE_SELF = 0x00000800
_IN_Q_OVERFLOW = 0x00004000
_IN_IGNORED = 0x00008000
_IN_ONLYDIR = 0x01000000
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name (NUL padded)
_GONE = _IN_MOVED_FROM | _IN_DELETE
_LOST = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_Q_OVERFLOW | _IN_IGNORED


class DirEvents:
    """One folder's inotify watch: :meth:`added` gives the names created in it or moved into it
    since the last call.

    Parameters
    ----------
    fd : int
        The inotify descriptor (closed with the object).
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._close = weakref.finalize(self, os.close, fd)

    def close(self) -> None:
        """Closes the inotify descriptor."""
        self._close()

    def added(self) -> list[str] | None:
        """The names added to the folder since the last call, in the order they came (a name
        created and removed in between: not there); None when the events cannot tell (a name
        that was there before removed or moved away, an overflow, the folder moved or removed).

        Returns
        -------
        list of str or None
        """
        names: dict[str, None] = {}
        whole = False
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                break
            except OSError:
                return None
            if not data:
                break
            at = 0
            while at + _EVENT.size <= len(data):
                _wd, mask, _cookie, size = _EVENT.unpack_from(data, at)
                raw = data[at + _EVENT.size : at + _EVENT.size + size].rstrip(b"\0")
                at += _EVENT.size + size
                name = os.fsdecode(raw)
                if mask & _LOST:
                    whole = True
                elif mask & (_IN_CREATE | _IN_MOVED_TO):
                    names[name] = None
                elif mask & _GONE:
                    if name in names:
                        del names[name]  # a file that came and went between two looks (a temporary file)
                    else:
                        whole = True
        return None if whole else list(names)


def open_events(folder: Any) -> DirEvents | None:
    """An inotify watch of ``folder`` (its names created, moved in, removed), or None where there is
    none (not Linux, no inotify, the limit of watches reached, the folder gone).

    Parameters
    ----------
    folder : path
        The folder.

    Returns
    -------
    DirEvents or None
    """
    if not sys.platform.startswith("linux") or os.environ.get("NAVDTW_NO_INOTIFY"):
        return None
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        init, add = libc.inotify_init1, libc.inotify_add_watch
    except (OSError, AttributeError):
        return None
    fd = init(_IN_NONBLOCK | _IN_CLOEXEC)
    if fd < 0:
        return None
    mask = _IN_CREATE | _IN_MOVED_TO | _GONE | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR
    if add(fd, os.fsencode(os.fspath(folder)), ctypes.c_uint32(mask)) < 0:
        with contextlib.suppress(OSError):
            os.close(fd)
        return None
    return DirEvents(fd)
