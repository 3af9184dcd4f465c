"""The synthetic navigation world of the nDTW paper's human study (Ilharco et al. 2019).

A ``size x size`` grid of nodes (15 x 15 = 225 by default); node ``v = i * size + j`` sits at
``(x, y)`` with ``x ~ U(i - jitter, i + jitter)`` and ``y ~ U(j - jitter, j + jitter)`` (jitter 0.3,
unit-less "metres"). Every pair of nodes at Euclidean distance ``<= radius`` (1.4) is joined by an
edge weighted by that distance. The success threshold is ``1.33 x`` the mean edge length.

Paths start at a random node and repeatedly pick a waypoint two or three edges away (graph hop
distance 2 or 3, uniformly among all such nodes), consecutive waypoints joined by shortest paths by
metric distance. Everything is seeded through ``numpy.random.default_rng``, so a seed fixes the world
and every path drawn from it.

This is navdtw's embedded default demo: it needs no data files::

    world = SyntheticWorld.generate(seed=0)
    refs, queries = world.sample_pairs(100, seed=1)
"""

from __future__ import annotations

from typing import Union

import numpy as np
from scipy.sparse.csgraph import shortest_path

from ._messages import shown
from .graphs import NavGraph

__all__ = ["PAIR_KINDS", "SyntheticWorld"]

#: The kinds of query :meth:`SyntheticWorld.sample_pairs` generates; pair ``i`` has kind
#: ``PAIR_KINDS[i % len(PAIR_KINDS)]``.
PAIR_KINDS: tuple[str, ...] = ("identical", "detour", "near_goal", "partial", "random")

Segments = Union[int, tuple[int, int]]
RngLike = Union[np.random.Generator, int, None]


def _segment_range(segments: Segments) -> tuple[int, int]:
    if isinstance(segments, (int, np.integer)) and not isinstance(segments, bool):
        lo = hi = int(segments)
    else:
        try:
            lo, hi = (int(s) for s in segments)  # type: ignore[union-attr]
        except (TypeError, ValueError):
            raise TypeError(f"segments: expected an int or a (min, max) pair, got {shown(segments)}") from None
    if lo < 1 or hi < lo:
        raise ValueError(f"segments: need 1 <= min <= max, got {shown(segments)}")
    return lo, hi


class SyntheticWorld:
    """A jittered grid world with its graph, distances and path generator.

    Build one with :meth:`generate`; the constructor takes a drawn world.

    Parameters
    ----------
    positions : array_like
        ``[V, 2]`` node coordinates.
    edges : array_like
        ``[E, 2]`` node index pairs, ``edges[:, 0] < edges[:, 1]``; at least one.
    size : int
        Grid side.
    jitter : float
        Half-width of the jitter the positions were drawn with.
    radius : float
        The joining distance the edges were drawn with.
    seed : int, optional
        The seed the world was drawn with (kept for the record and the graph's name).

    Raises
    ------
    ValueError
        No edge, or no node with another node two or three hops away (no path can be drawn);
        the errors of :class:`navdtw.NavGraph` for the positions and edges.
    TypeError
        The errors of :class:`navdtw.NavGraph` for the positions and edges.

    Attributes
    ----------
    positions : numpy.ndarray
        float64 ``[V, 2]`` node coordinates; node ``i * size + j`` lies near grid point
        ``(i, j)``.
    edges : numpy.ndarray
        int64 ``[E, 2]`` undirected edges, ``edges[:, 0] < edges[:, 1]``, sorted
        lexicographically.
    edge_lengths : numpy.ndarray
        float64 ``[E]`` Euclidean length of each edge.
    threshold : float
        Success threshold, ``1.33 * edge_lengths.mean()``.
    graph : NavGraph
        The world as a :class:`navdtw.graphs.NavGraph`: adjacency, neighbours, shortest paths and
        distances all come from it.
    distances : numpy.ndarray
        float32 ``[V, V]``, read-only: all-pairs shortest-path distances along the edges
        (``inf`` between disconnected nodes); ``graph.distances``.
    hops : numpy.ndarray
        int64 ``[V, V]``, read-only: all-pairs hop counts (``-1`` between disconnected nodes).
    size : int
        Grid side (a generation parameter).
    jitter : float
        Half-width of the positions' jitter (a generation parameter).
    radius : float
        The joining distance of the edges (a generation parameter).
    seed : int or None
        The seed the world was drawn with (a generation parameter).
    """

    def __init__(
        self,
        positions: np.ndarray,
        edges: np.ndarray,
        *,
        size: int,
        jitter: float,
        radius: float,
        seed: int | None = None,
    ) -> None:
        self.positions = np.ascontiguousarray(positions, dtype=np.float64)
        self.edges = np.ascontiguousarray(edges, dtype=np.int64)
        self.size = int(size)
        self.jitter = float(jitter)
        self.radius = float(radius)
        self.seed = seed
        if self.edges.shape[0] == 0:
            raise ValueError(f"the world has no edges (radius={radius}); increase radius")
        a, b = self.edges[:, 0], self.edges[:, 1]
        self.edge_lengths = np.sqrt(((self.positions[a] - self.positions[b]) ** 2).sum(axis=1))
        self.threshold = float(1.33 * self.edge_lengths.mean())
        self.graph = NavGraph(self.positions, self.edges, name=f"synthetic-{self.size}x{self.size}-seed{self.seed}")
        self.distances = self.graph.distances  # read-only, shared (copy before changing)
        hops = shortest_path(self.graph.adjacency, directed=False, unweighted=True)
        self.hops = np.where(np.isfinite(hops), hops, -1).astype(np.int64)
        self.hops.setflags(write=False)
        # Waypoint candidates: nodes two or three hops away.
        self._candidates = (self.hops == 2) | (self.hops == 3)
        self._starts = np.flatnonzero(self._candidates.any(axis=1))
        if self._starts.size == 0:
            raise ValueError("no node has another node two or three hops away; cannot draw paths")

    # ------------------------------------------------------------------------------------------
    @classmethod
    def generate(cls, seed: int = 0, size: int = 15, jitter: float = 0.3, radius: float = 1.4) -> SyntheticWorld:
        """Draws a world.

        Parameters
        ----------
        seed : int, optional
            Seed for ``numpy.random.default_rng`` (default 0).
        size : int, optional
            Grid side, >= 2; the world has ``size**2`` nodes (default 15 -> 225).
        jitter : float, optional
            Half-width of the uniform jitter around each grid point, in grid units (default 0.3);
            finite and >= 0.
        radius : float, optional
            Nodes at Euclidean distance ``<= radius`` are joined (default 1.4); finite and > 0.

        Returns
        -------
        SyntheticWorld
            The world; the same arguments always draw the same world.

        Raises
        ------
        ValueError
            A ``size`` that is not an integer >= 2, a negative or non-finite ``jitter``, a
            ``radius`` that is not finite and > 0, or a world without edges or paths (as the
            constructor).
        TypeError
            A ``jitter`` or ``radius`` that is not a number (numpy's message).
        """
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 2:
            raise ValueError(f"size: need an integer >= 2, got {shown(size)}")
        if not np.isfinite(jitter) or jitter < 0:
            raise ValueError(f"jitter: need a finite value >= 0, got {shown(jitter)}")
        if not np.isfinite(radius) or radius <= 0:
            raise ValueError(f"radius: need a finite value > 0, got {shown(radius)}")
        rng = np.random.default_rng(seed)
        size = int(size)
        i, j = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
        grid = np.stack([i.ravel(), j.ravel()], axis=1).astype(np.float64)
        positions = grid + rng.uniform(-jitter, jitter, size=grid.shape)
        a, b = np.triu_indices(positions.shape[0], k=1)
        d = np.sqrt(((positions[a] - positions[b]) ** 2).sum(axis=1))
        keep = d <= radius
        edges = np.stack([a[keep], b[keep]], axis=1)
        return cls(positions, edges, size=size, jitter=jitter, radius=radius, seed=seed)

    # ------------------------------------------------------------------------------------------
    @property
    def num_nodes(self) -> int:
        """Number of nodes V (``size**2``)."""
        return int(self.positions.shape[0])

    def neighbors(self, node: int) -> np.ndarray:
        """Nodes joined to ``node`` by an edge (``graph.neighbors``).

        Parameters
        ----------
        node : int
            A node index.

        Returns
        -------
        numpy.ndarray
            int64 node indices, ascending.

        Raises
        ------
        IndexError
            A node out of range (as :meth:`NavGraph.neighbors`).
        """
        return self.graph.neighbors(int(node))

    def shortest_path(self, a: int, b: int) -> np.ndarray:
        """A shortest path from ``a`` to ``b`` by metric distance (``graph.shortest_path``).

        Parameters
        ----------
        a, b : int
            The start and end nodes.

        Returns
        -------
        numpy.ndarray
            int64 node sequence, both ends included.

        Raises
        ------
        ValueError
            ``a`` and ``b`` are not connected.
        IndexError
            A node out of range.
        """
        return np.array(self.graph.shortest_path(int(a), int(b)), dtype=np.int64)

    def coordinates(self, path: np.ndarray) -> np.ndarray:
        """The positions of a node path (for coordinate-mode DTW).

        Parameters
        ----------
        path : array_like
            Node indices (numpy's ``IndexError`` for one out of range).

        Returns
        -------
        numpy.ndarray
            float32 ``[n, 2]`` coordinates.
        """
        return self.positions[np.asarray(path, dtype=np.int64)].astype(np.float32)

    # ------------------------------------------------------------------------------------------
    def random_path(
        self,
        rng: RngLike = None,
        segments: Segments = (1, 4),
        *,
        start: int | None = None,
        return_waypoints: bool = False,
    ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """A random path as the paper draws them.

        Parameters
        ----------
        rng : numpy.random.Generator or int or None, optional
            A ``numpy.random.Generator`` (advanced in place), or a seed for ``default_rng``.
        segments : int or tuple of int, optional
            Number of waypoint-to-waypoint segments: an int, or an inclusive ``(min, max)`` range drawn
            uniformly (default ``(1, 4)``).
        start : int, optional
            Start node; default a uniformly random node (among those with a node 2-3 hops away).
        return_waypoints : bool, optional
            Also return the waypoints (start first).

        Returns
        -------
        path : numpy.ndarray
            int64 node indices; consecutive nodes are neighbours.
        waypoints : numpy.ndarray
            int64, the start and each waypoint; only with ``return_waypoints=True``.

        Raises
        ------
        TypeError
            ``segments`` that is neither an int nor a ``(min, max)`` pair.
        ValueError
            ``segments`` below 1 or with ``max < min``, a ``start`` out of range or without a node
            two or three hops away.
        """
        rng = np.random.default_rng(rng)
        lo, hi = _segment_range(segments)
        k = int(rng.integers(lo, hi + 1))
        if start is None:
            current = int(rng.choice(self._starts))
        else:
            current = int(start)
            if not 0 <= current < self.num_nodes:
                raise ValueError(f"start: node {start} out of range [0, {self.num_nodes})")
            if not self._candidates[current].any():
                raise ValueError(f"start: node {start} has no node two or three hops away")
        waypoints = [current]
        pieces = [np.array([current], dtype=np.int64)]
        for _ in range(k):
            nxt = int(rng.choice(np.flatnonzero(self._candidates[current])))
            pieces.append(self.shortest_path(current, nxt)[1:])
            waypoints.append(nxt)
            current = nxt
        path = np.concatenate(pieces)
        if return_waypoints:
            return path, np.array(waypoints, dtype=np.int64)
        return path

    def sample_pairs(
        self, n: int, seed: RngLike = 0, segments: Segments = (1, 4)
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """``n`` (reference, query) pairs of varied quality, for demos and benchmarks.

        Each reference is a :meth:`random_path` with ``segments`` segments. Pair ``i``'s query has kind
        ``PAIR_KINDS[i % 5]``:

        ``identical``
            The reference itself (nDTW = 1).
        ``detour``
            The reference with a detour: after a random node ``r_k`` it visits a random neighbour of
            ``r_k`` (other than ``r_{k+1}`` where possible) and rejoins at ``r_{k+1}`` by shortest paths.
        ``near_goal``
            The shortest path from the reference's start to a node one or two hops from its goal.
        ``partial``
            The first half of the reference (at least its start node): stops early.
        ``random``
            An unrelated random path from a random start.

        Every query is a connected node path.

        Parameters
        ----------
        n : int
            Number of pairs, >= 0.
        seed : numpy.random.Generator or int or None, optional
            A generator (advanced in place) or a seed for ``default_rng`` (default 0).
        segments : int or tuple of int, optional
            The references' segments, as :meth:`random_path` (default ``(1, 4)``).

        Returns
        -------
        references : list of numpy.ndarray
            ``n`` int64 node paths.
        queries : list of numpy.ndarray
            ``n`` int64 node paths, query ``i`` of kind ``PAIR_KINDS[i % 5]``.

        Raises
        ------
        ValueError
            A negative or non-integer ``n``, or ``segments`` below 1 or with ``max < min``.
        TypeError
            ``segments`` that is neither an int nor a ``(min, max)`` pair.
        """
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"n: need a non-negative integer, got {shown(n)}")
        _segment_range(segments)
        rng = np.random.default_rng(seed)
        refs: list[np.ndarray] = []
        queries: list[np.ndarray] = []
        for i in range(int(n)):
            ref = self.random_path(rng, segments)
            assert isinstance(ref, np.ndarray)
            kind = PAIR_KINDS[i % len(PAIR_KINDS)]
            if kind == "identical":
                q = ref.copy()
            elif kind == "detour":
                q = self._detour(ref, rng)
            elif kind == "near_goal":
                goal = int(ref[-1])
                near = np.flatnonzero((self.hops[goal] == 1) | (self.hops[goal] == 2))
                q = self.shortest_path(int(ref[0]), int(rng.choice(near)))
            elif kind == "partial":
                q = ref[: max(1, len(ref) // 2)].copy()
            else:
                q = self.random_path(rng, segments)
            refs.append(ref)
            queries.append(np.asarray(q, dtype=np.int64))
        return refs, queries

    def _detour(self, ref: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        k = int(rng.integers(0, len(ref) - 1))
        here, there = int(ref[k]), int(ref[k + 1])
        options = self.neighbors(here)
        preferred = options[options != there]
        m = int(rng.choice(preferred if preferred.size else options))
        return np.concatenate(
            [ref[: k + 1], self.shortest_path(here, m)[1:], self.shortest_path(m, there)[1:], ref[k + 2 :]]
        )
