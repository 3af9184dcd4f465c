"""``navdtw order``'s order in a habitat loop: the episodes put in the order in memory (the split
file is not copied), the iterator options that keep it, and the check that the loop runs it.

habitat-lab's ``Env`` draws its episodes from an ``EpisodeIterator``
(``habitat/core/dataset.py``, habitat-lab 0.3.3) built from ``environment.iterator_options``.
Of its options, these change the order of the episodes it is given:

* ``shuffle``: ``random.shuffle`` of the episodes before the first (and again on each cycle);
* ``group_by_scene``: the episodes sorted by their scene's first appearance;
* ``num_episode_sample`` >= 0: ``np.random.choice`` of that many episodes (a sample, in a random
  order);
* ``max_scene_repeat_episodes`` > 0 and ``max_scene_repeat_steps`` > 0: after that many episodes
  (or steps, ``Env.step`` counts them) in one scene, the episodes of that scene still to come are
  moved to the end.

:data:`ITERATOR_OPTIONS` turns all of them off (hydra's defaults turn ``shuffle``,
``group_by_scene`` and ``max_scene_repeat_steps`` = 10,000 on); ``cycle`` and
``step_repetition_range`` do not change the first pass and are left alone.
"""

from __future__ import annotations

import hashlib
import numbers
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._messages import named
from .._typing import PathLike
from ..order import Order, load_order

__all__ = [
    "ITERATOR_OPTIONS",
    "OrderCheck",
    "check_iterator_options",
    "keep_order",
    "order_episodes",
    "order_share",
]

#: The ``EpisodeIterator`` options that keep the episodes in the order they are given.
ITERATOR_OPTIONS: dict[str, Any] = {
    "shuffle": False,
    "group_by_scene": False,
    "num_episode_sample": -1,
    "max_scene_repeat_episodes": -1,
    "max_scene_repeat_steps": -1,
}

#: ``EpisodeIterator.__init__``'s defaults (habitat-lab 0.3.3): what a missing option means.
_ITERATOR_DEFAULTS = {
    "shuffle": False,
    "group_by_scene": True,
    "num_episode_sample": -1,
    "max_scene_repeat_episodes": -1,
    "max_scene_repeat_steps": -1,
}

#: Why each option, when on, breaks the order (habitat-lab 0.3.3's ``EpisodeIterator``).
_WHY = {
    "shuffle": "shuffles the episodes (random.shuffle) before the first and on each cycle",
    "group_by_scene": "sorts the episodes by scene",
    "num_episode_sample": "runs a random sample of the episodes (np.random.choice), in a random order",
    "max_scene_repeat_episodes": "moves a scene's next episodes to the end after that many in a row",
    "max_scene_repeat_steps": "moves a scene's next episodes to the end after that many steps in it",
}


def _breaks(name: str, value: Any) -> bool:
    if name in ("shuffle", "group_by_scene"):
        return bool(value)
    if name == "num_episode_sample":
        return value >= 0
    return value > 0  # the scene-repeat limits: -1 (or 0) is no limit


def _get(node: Any, key: str) -> Any:
    """``node[key]`` or ``node.key``; ``None`` when it has neither (a mapping, a hydra or yacs node)."""
    if node is None:
        return None
    if isinstance(node, Mapping) or hasattr(node, "keys"):
        try:
            return node.get(key, None)
        except (TypeError, KeyError, AttributeError):
            return None
    return getattr(node, key, None)


def _locate(config: Any) -> tuple[Any, str, bool]:
    """The iterator options' node of a configuration, its dotted name, and whether its keys are
    upper case (yacs): a hydra root (``habitat.environment.iterator_options``), its ``habitat``
    node, a yacs habitat config (``ENVIRONMENT.ITERATOR_OPTIONS``), a VLN-CE trainer config
    (``TASK_CONFIG.ENVIRONMENT.ITERATOR_OPTIONS``), or the options node itself."""
    paths = (
        ("habitat", "environment", "iterator_options"),
        ("environment", "iterator_options"),
        ("TASK_CONFIG", "ENVIRONMENT", "ITERATOR_OPTIONS"),
        ("ENVIRONMENT", "ITERATOR_OPTIONS"),
    )
    for path in paths:
        node = config
        for key in path:
            node = _get(node, key)
            if node is None:
                break
        else:
            return node, ".".join(path), path[-1].isupper()
    keys = [str(k) for k in config] if hasattr(config, "keys") else []
    upper = bool(keys) and all(k.isupper() for k in keys)
    return config, "ITERATOR_OPTIONS" if upper else "iterator_options", upper


def check_iterator_options(options: Any) -> None:
    """Refuses habitat iterator options that change the order of the episodes.

    Parameters
    ----------
    options : mapping, configuration or EpisodeIterator
        The options (``{"shuffle": False, ...}``, or upper-case yacs keys), a configuration that
        holds them (habitat-lab 0.3's hydra config or its ``habitat`` node:
        ``habitat.environment.iterator_options``; habitat 0.1.7 / 0.2.x's yacs config:
        ``ENVIRONMENT.ITERATOR_OPTIONS``; a VLN-CE trainer's: ``TASK_CONFIG.ENVIRONMENT.ITERATOR_OPTIONS``),
        or habitat's ``EpisodeIterator`` (``env.episode_iterator``). A missing option is
        ``EpisodeIterator``'s default (``group_by_scene`` on).

    Raises
    ------
    ValueError
        An option that changes the order (the module's list): one line naming each and what it
        does, and how to turn it off (:func:`keep_order`).
    """
    if hasattr(options, "max_scene_repetition_episodes"):  # an EpisodeIterator
        where, values = (
            "the episode iterator's ",
            {
                "shuffle": options.shuffle,
                "group_by_scene": options.group_by_scene,
                "max_scene_repeat_episodes": options.max_scene_repetition_episodes,
                "max_scene_repeat_steps": options.max_scene_repetition_steps,
            },
        )
    else:
        node, where, upper = _locate(options)
        values = {}
        for name, default in _ITERATOR_DEFAULTS.items():
            value = _get(node, name.upper() if upper else name)
            values[name] = default if value is None else value
        where = f"{where}."
    upper_keys = where.isupper()
    bad = []
    for name, value in values.items():
        if isinstance(value, str) or not isinstance(value, (bool, numbers.Real)):
            raise ValueError(f"{where}{name}: not a boolean or a number, got {value!r}")
        if _breaks(name, value):
            key = name.upper() if upper_keys else name
            bad.append(f"{where}{key} is {value!r} (habitat's EpisodeIterator {_WHY[name]})")
    if bad:
        raise ValueError(
            f"these iterator options change the order of the episodes: {'; '.join(bad)}; "
            "navdtw.habitat.keep_order(config) sets the options that keep it (shuffle and group_by_scene off, "
            "no sampling, no scene-repeat limit)"
        )


def keep_order(config: Any) -> Any:
    """Sets a configuration's iterator options to those that keep the episodes' order
    (:data:`ITERATOR_OPTIONS`).

    Parameters
    ----------
    config : configuration
        habitat-lab 0.3's hydra config (or its ``habitat`` node): sets
        ``habitat.environment.iterator_options``; habitat 0.1.7 / 0.2.x's yacs config:
        ``ENVIRONMENT.ITERATOR_OPTIONS``; a VLN-CE trainer's config:
        ``TASK_CONFIG.ENVIRONMENT.ITERATOR_OPTIONS`` (upper-case keys); or the options node itself.
        A read-only hydra config or a frozen yacs config is opened for the change and closed again.

    Returns
    -------
    configuration
        ``config``, changed in place.

    Raises
    ------
    ValueError
        A configuration without iterator options.
    """
    node, where, upper = _locate(config)
    if not hasattr(node, "__setitem__") and not hasattr(node, "__setattr__"):
        raise ValueError(f"{where}: not a configuration node the options can be set in")
    values = {(k.upper() if upper else k): v for k, v in ITERATOR_OPTIONS.items()}
    if hasattr(config, "is_frozen") and config.is_frozen():  # yacs
        config.defrost()
        try:
            _set_all(node, values)
        finally:
            config.freeze()
        check_iterator_options(config)
        return config
    try:
        from omegaconf import DictConfig, read_write
    except ImportError:  # habitat 0.1.7 / 0.2.x: no omegaconf
        DictConfig = read_write = None
    if DictConfig is not None and isinstance(config, DictConfig):
        with read_write(config):
            _set_all(node, values)
    else:
        _set_all(node, values)
    check_iterator_options(config)
    return config


def _set_all(node: Any, values: dict[str, Any]) -> None:
    for key, value in values.items():
        if isinstance(node, Mapping) or hasattr(node, "__setitem__"):
            node[key] = value
        else:
            setattr(node, key, value)


def _as_order(order: Order | PathLike) -> Order:
    if isinstance(order, Order):
        return order
    if isinstance(order, (str, Path)) or hasattr(order, "__fspath__"):
        return load_order(order)
    raise ValueError(
        f"order must be a navdtw order (navdtw.order.load_order('order.json')) or its file, got {type(order).__name__}"
    )


def _check_share(rank: Any, world_size: Any) -> tuple[int, int]:
    for what, v in (("rank", rank), ("world_size", world_size)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise ValueError(f"{what} must be an integer, got {v!r}")
    rank, world_size = int(rank), int(world_size)
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"rank must be in 0..world_size - 1, got rank {rank} of world_size {world_size}")
    return rank, world_size


def order_share(order: Order | PathLike, *, rank: int = 0, world_size: int = 1) -> list[tuple[int, str]]:
    """One rank's share of an order: ``(unit position in the order, episode id)`` in the order it
    runs them.

    ``navdtw order --workers k`` gives rank ``r`` of ``k`` the units at positions ``r, r + k,
    r + 2k, ...`` (round-robin, so ranks at the same pace finish a prefix of the order together):
    the share of its ``order.worker{r}of{k}.txt``.

    Parameters
    ----------
    order : navdtw.order.Order, str or Path
        The order (``order.json`` of ``navdtw order``, or a plain id list).
    rank : int, optional
        This process's rank (0).
    world_size : int, optional
        How many ranks share the order (1: the whole order).

    Returns
    -------
    list of (int, str)

    Raises
    ------
    ValueError
        A rank outside ``0..world_size - 1``; an order file that is not one (named).
    FileNotFoundError
        No such order file.
    """
    order = _as_order(order)
    rank, world_size = _check_share(rank, world_size)
    return [(k, i) for k in range(rank, len(order.units), world_size) for i in order.units[k]]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _check_split(order: Order, split: PathLike) -> None:
    path = Path(split)
    if not path.is_file():
        raise FileNotFoundError(f"split file not found: {named(path)}")
    if order.split_sha256 is None:
        raise ValueError(
            f"{order.source}: a plain id list says no split to check {named(path.name)} against: give order.json"
        )
    if _sha256(path) != order.split_sha256:
        raise ValueError(
            f"{named(path.name)}: not the split of the order {order.source} (drawn from {named(order.split)}, "
            f"SHA-256 {order.split_sha256[:12]}...): give the order of the split the loop runs"
        )


def order_episodes(
    episodes: Any,
    order: Order | PathLike,
    *,
    rank: int = 0,
    world_size: int = 1,
    split: PathLike | None = None,
) -> list:
    """Puts a habitat dataset's episodes (or one rank's share) in ``navdtw order``'s order, in memory.

    The split file is not copied: the episodes the loop has loaded are reordered (and, with
    ``world_size > 1``, cut to this rank's share, :func:`order_share`). Given habitat's ``Env``,
    its episodes are set (``env.episodes = ...``, which rebuilds its episode iterator and makes the
    next ``env.reset()`` start the order), and the iterator is checked: options that reorder the
    episodes (:func:`check_iterator_options`) are refused.

    Parameters
    ----------
    episodes : habitat.Env, habitat.Dataset or list of episodes
        What holds the split's episodes (each with an ``episode_id``): an ``Env`` or a ``Dataset``
        (its ``episodes`` are set), or a list (a new list is returned, the list given is left as it is).
    order : navdtw.order.Order, str or Path
        The order (``order.json`` of ``navdtw order``).
    rank : int, optional
        This process's rank (0).
    world_size : int, optional
        How many ranks share the order (1).
    split : str or Path, optional
        The split file the episodes were loaded from: its SHA-256 must be the order's split's.

    Returns
    -------
    list
        The episodes of this rank's share, in the order's order.

    Raises
    ------
    ValueError
        The episodes are not the order's split's (an episode of the order missing, named with its
        position; an episode not in the order, named; an id twice); a split file that is not the
        order's; iterator options that reorder the episodes; a bad rank.
    FileNotFoundError
        No such order or split file.
    """
    order = _as_order(order)
    share = order_share(order, rank=rank, world_size=world_size)
    if split is not None:
        _check_split(order, split)
    given = list(getattr(episodes, "episodes", episodes))
    by_id: dict[str, Any] = {}
    for episode in given:
        eid = str(episode.episode_id)
        if eid in by_id:
            raise ValueError(f"episode {named(eid)} is in the episodes twice: give each episode once")
        by_id[eid] = episode
    place = {i: k for k, unit in enumerate(order.units) for i in unit}
    for eid in by_id:
        if eid not in place:
            raise ValueError(
                f"episode {named(eid)} of the episodes given is not in the order {order.source} "
                f"({len(order.ids)} episodes{_of_split(order)}): an order of another split?"
            )
    for k, unit in enumerate(order.units):
        for eid in unit:
            if eid not in by_id:
                raise ValueError(
                    f"episode {named(eid)} (position {k} of the order {order.source}) is not in the episodes "
                    f"given ({len(by_id)}): a dataset of another split, or filtered (content_scenes)?"
                )
    ordered = [by_id[eid] for _, eid in share]
    if hasattr(episodes, "episodes") and not isinstance(episodes, (list, tuple)):
        episodes.episodes = ordered
        iterator = getattr(episodes, "episode_iterator", None)
        if iterator is not None and hasattr(iterator, "max_scene_repetition_episodes"):
            check_iterator_options(iterator)
            got = [str(e.episode_id) for e in iterator.episodes]
            if got != [eid for _, eid in share]:
                raise ValueError(
                    "the episode iterator does not keep the order: its episodes are not the order's "
                    "(num_episode_sample >= 0?); navdtw.habitat.keep_order(config) sets the options that keep it"
                )
    return ordered


def _of_split(order: Order) -> str:
    return f" of {named(order.split)}" if order.split else ""


class OrderCheck:
    """The check that a loop runs the episodes in the order: call it with each episode it starts.

    Parameters
    ----------
    order : navdtw.order.Order, str or Path
        The order (``order.json`` of ``navdtw order``).
    rank : int, optional
        This process's rank (0).
    world_size : int, optional
        How many ranks share the order (1).
    done : iterable of str, optional
        Episodes already run (a resumed loop: ``EpisodeLog.done``); they must be the share's first.

    Attributes
    ----------
    share : list of (int, str)
        :func:`order_share`: the unit position in the order and the episode id of each episode this
        rank runs, in order.
    position : int
        How many episodes of the share have run.

    Raises
    ------
    ValueError
        A bad rank; ``done`` episodes that are not the share's first (the first one out of place named).
    FileNotFoundError
        No such order file.

    Examples
    --------
    >>> from navdtw.order import Order
    >>> check = OrderCheck(Order((("4",), ("1",), ("7",), ("2",))), rank=1, world_size=2)
    >>> check("1"), check("2")
    (0, 1)
    """

    def __init__(self, order: Order | PathLike, *, rank: int = 0, world_size: int = 1, done: Any = ()) -> None:
        self.order = _as_order(order)
        self.rank, self.world_size = _check_share(rank, world_size)
        self.share = order_share(self.order, rank=rank, world_size=world_size)
        self.position = 0
        done = {str(i) for i in done}
        while self.position < len(self.share) and self.share[self.position][1] in done:
            done.discard(self.share[self.position][1])
            self.position += 1
        if done:
            first = min(done, key=lambda i: next((p for p, (_, e) in enumerate(self.share) if e == i), len(self.share)))
            raise ValueError(
                f"episode {named(first)} has run already but is not among the first {self.position} episodes of "
                f"{self._whose()}: the earlier run did not follow the order"
            )

    def _whose(self) -> str:
        share = f"rank {self.rank}'s share (of {self.world_size})" if self.world_size > 1 else "the order"
        return f"{share} of {self.order.source}"

    def __call__(self, episode: Any) -> int:
        """Checks that ``episode`` is the next of the share.

        Parameters
        ----------
        episode : habitat.core.dataset.Episode, str or int
            The episode the loop starts (``env.current_episode`` after ``env.reset()``), or its id.

        Returns
        -------
        int
            Its position in the share (0 for the first).

        Raises
        ------
        ValueError
            Another episode than the share's next (both named, with the position), or an episode
            after the share's last.
        """
        eid = str(getattr(episode, "episode_id", episode))
        k = self.position
        if k >= len(self.share):
            raise ValueError(
                f"episode {named(eid)} ran at position {k}, after the last of the {len(self.share)} episodes of "
                f"{self._whose()}: the loop runs more episodes than the order (iterator option cycle?)"
            )
        unit, want = self.share[k]
        if eid != want:
            raise ValueError(
                f"episode {named(eid)} ran at position {k} of {self._whose()}, where the order has episode "
                f"{named(want)} (unit {unit} of the order): the loop does not run the order "
                "(navdtw.habitat.order_episodes puts the episodes in it; keep_order sets the iterator options)"
            )
        self.position += 1
        return k

    @property
    def finished(self) -> bool:
        """True once every episode of the share has run."""
        return self.position >= len(self.share)

    def __repr__(self) -> str:
        return f"OrderCheck({self._whose()}, {self.position} of {len(self.share)} run)"
