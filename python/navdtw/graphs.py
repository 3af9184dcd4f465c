"""Navigation graphs: viewpoint ids -> node indices, shortest-path distance matrices, geodesic fields.

* :class:`NavGraph` - one undirected, metric navigation graph (a Matterport3D scan): node positions
  (metres), edges weighted by the Euclidean distance between their end points, the all-pairs
  shortest-path matrix (float32, metres, ``inf`` = unreachable) that node-mode DTW consumes.
* :class:`GraphSet` - many scans as one "environment" index, so a whole split (paths spanning
  many scans) encodes to one :class:`navdtw.Paths` plus an ``env`` index per path, and scores in
  one ``navdtw.dtw_batch(..., distances=set.distances, env=env)``. Matterport3D connectivity files
  are read by :mod:`navdtw.datasets.matterport` (``navdtw.load_connectivity``; one scan's file:
  ``load_navgraph``): this module knows no file format.
* :class:`DistanceField` - geodesic distances for *continuous* environments: a finite set of points
  (graph nodes or free cells of an occupancy grid) with their shortest-path distance matrix and a
  nearest-point snap. This is the nDTW paper's recommendation for continuous settings with obstacles
  (Ilharco et al. 2019): snap both paths to the field's points and run node-mode DTW over the
  geodesic matrix instead of straight-line Euclidean distances, which cut through walls.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np

from ._messages import shown
from .engine import check_matrix
from .paths import Paths

__all__ = [
    "DistanceField",
    "GraphSet",
    "NavGraph",
    "UnknownViewpointError",
    "resolve_distances",
]


class UnknownViewpointError(ValueError, KeyError):
    """A viewpoint id (or node index) that the graph does not hold.

    Both a ``ValueError`` (bad input data) and a ``KeyError`` (failed lookup), so either ``except``
    catches it. The message is printed as is (``KeyError`` would quote it).
    """

    def __str__(self) -> str:  # KeyError.__str__ would repr() the message
        return str(self.args[0]) if self.args else ""


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


# --------------------------------------------------------------------------------------------
# NavGraph
# --------------------------------------------------------------------------------------------


class NavGraph:
    """An undirected navigation graph with Euclidean edge weights (metres).

    Parameters
    ----------
    positions : array_like
        ``[V, 2]`` or ``[V, 3]`` node positions in metres, V >= 1, finite (stored as float64,
        read-only).
    edges : array_like
        ``[E, 2]`` integer node index pairs, undirected. Indices must be in ``0..V-1``; self
        loops are rejected; duplicates and both orientations of a pair are merged, so
        ``edges`` holds each undirected edge once as ``(i, j)`` with ``i < j``, sorted.
    ids : sequence of str, optional
        Viewpoint id strings, one per node (default ``"0", "1", ...``); must be unique.
    name : str, optional
        A label used in error messages (the scan id for Matterport3D graphs).

    Raises
    ------
    TypeError
        ``edges`` that are not integers, an id that is not a string.
    ValueError
        ``positions`` of another shape, with no node or a non-finite value; ``edges`` not of
        shape ``[E, 2]``, with an index out of range or a self loop; as many ids as nodes, or a
        repeated id. Each message names the graph and the first bad entry.

    Notes
    -----
    The weight of edge ``(i, j)`` is ``||positions[i] - positions[j]||`` (zero-length edges are
    kept as edges). Nodes may be isolated; their distances to every other node are ``inf``.
    """

    def __init__(self, positions, edges, *, ids: Sequence[str] | None = None, name: str = "") -> None:
        self.name = str(name)
        label = f"graph {self.name!r}" if self.name else "graph"
        pos = np.array(positions, dtype=np.float64)  # copy: the graph owns its positions
        if pos.ndim != 2 or pos.shape[1] not in (2, 3):
            raise ValueError(f"{label}: positions must have shape [V, 2] or [V, 3], got {pos.shape}")
        if pos.shape[0] == 0:
            raise ValueError(f"{label}: a graph needs at least one node")
        if not np.isfinite(pos).all():
            bad = int(np.argmin(np.isfinite(pos).all(axis=1)))
            raise ValueError(f"{label}: positions[{bad}] is not finite")
        n = pos.shape[0]

        e = np.asarray(edges)
        if e.size == 0:
            e = np.zeros((0, 2), dtype=np.int64)
        if e.dtype == np.bool_ or e.dtype.kind not in "iu":
            raise TypeError(f"{label}: edges must be an integer [E, 2] array, got dtype {e.dtype}")
        if e.ndim != 2 or e.shape[1] != 2:
            raise ValueError(f"{label}: edges must have shape [E, 2], got {e.shape}")
        e = e.astype(np.int64)
        bad = (e < 0).any(axis=1) | (e >= n).any(axis=1)
        if bad.any():
            k = int(np.argmax(bad))
            raise ValueError(f"{label}: edges[{k}] = {tuple(int(x) for x in e[k])} is out of range for {n} nodes")
        loops = e[:, 0] == e[:, 1]
        if loops.any():
            k = int(np.argmax(loops))
            raise ValueError(f"{label}: edges[{k}] = ({e[k, 0]}, {e[k, 1]}) is a self loop")
        # canonical form: one row per undirected edge, (min, max), sorted
        e = np.unique(np.sort(e, axis=1), axis=0) if len(e) else e

        if ids is None:
            id_list = [str(i) for i in range(n)]
        else:
            id_list = list(ids)
            if len(id_list) != n:
                raise ValueError(f"{label}: {len(id_list)} ids for {n} nodes")
            for k, v in enumerate(id_list):
                if not isinstance(v, str):
                    raise TypeError(f"{label}: ids[{k}] must be a string, got {type(v).__name__}")
        index = {v: i for i, v in enumerate(id_list)}
        if len(index) != n:
            seen: dict[str, int] = {}
            for k, v in enumerate(id_list):
                if v in seen:
                    raise ValueError(f"{label}: viewpoint id {v!r} appears twice (nodes {seen[v]} and {k})")
                seen[v] = k

        self.positions = _readonly(pos)
        self.edges = _readonly(e)
        self.weights = _readonly(np.linalg.norm(pos[e[:, 0]] - pos[e[:, 1]], axis=1))
        self.ids: list[str] = id_list
        self.index: dict[str, int] = index
        rows = np.concatenate([e[:, 0], e[:, 1]])
        cols = np.concatenate([e[:, 1], e[:, 0]])
        w = np.concatenate([self.weights, self.weights])
        # csgraph treats explicitly stored zeros of a sparse matrix as edges, so zero-length edges
        # survive as long as nothing calls eliminate_zeros()
        import scipy.sparse as sp  # here: reading the CLI options (data set kinds) needs no scipy

        adj = sp.csr_matrix((w, (rows, cols)), shape=(n, n))
        adj.sort_indices()
        self.adjacency = adj
        self._indptr = _readonly(adj.indptr.astype(np.int64))
        self._indices = _readonly(adj.indices.astype(np.int64))
        self._distances: np.ndarray | None = None
        self._pred_rows: dict[int, np.ndarray] = {}

    # --- basic structure ---------------------------------------------------------------------

    @property
    def num_nodes(self) -> int:
        """Number of nodes V."""
        return int(self.positions.shape[0])

    def __len__(self) -> int:
        return self.num_nodes

    @property
    def num_edges(self) -> int:
        """Number of undirected edges E."""
        return int(self.edges.shape[0])

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return f"NavGraph{label}({self.num_nodes} nodes, {self.num_edges} edges)"

    @property
    def csr(self) -> tuple[np.ndarray, np.ndarray]:
        """The adjacency as ``(indptr, indices)``, both int64 and read-only (CSR).

        The neighbours of node ``i`` are ``indices[indptr[i]:indptr[i + 1]]``, sorted ascending.
        """
        return self._indptr, self._indices

    def neighbors(self, i: int) -> np.ndarray:
        """The neighbours of node ``i``.

        Parameters
        ----------
        i : int
            A node index, ``0 <= i < V``.

        Returns
        -------
        numpy.ndarray
            int64 node indices, ascending (a read-only view).

        Raises
        ------
        TypeError
            ``i`` is not an integer.
        IndexError
            ``i`` is out of range.
        """
        i = self._node(i, "node")
        return self._indices[self._indptr[i] : self._indptr[i + 1]]

    @property
    def degree(self) -> np.ndarray:
        """Number of neighbours of every node (int64 ``[V]``)."""
        return np.diff(self._indptr)

    def _node(self, i, what: str) -> int:
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"{what} must be an integer node index, got {shown(i)}")
        if not 0 <= i < self.num_nodes:
            raise IndexError(f"{what} {i} is out of range for graph {self.name!r} with {self.num_nodes} nodes")
        return int(i)

    # --- distances ---------------------------------------------------------------------------

    @property
    def distances(self) -> np.ndarray:
        """All-pairs shortest-path distances, float32 ``[V, V]`` metres, ``inf`` = unreachable.

        Computed on first use (Dijkstra, ``scipy.sparse.csgraph``) and cached; read-only, since
        every caller shares it (copy it before changing it).
        """
        if self._distances is None:
            from scipy.sparse.csgraph import shortest_path as _cs_shortest_path

            d = _cs_shortest_path(self.adjacency, method="D", directed=False)
            self._distances = _readonly(d.astype(np.float32))
        return self._distances

    def shortest_path(self, a: int, b: int) -> list[int]:
        """The node indices of a shortest path from ``a`` to ``b`` (both ends included).

        Ties between equally short paths are broken by Dijkstra's visiting order from ``a``
        (``scipy.sparse.csgraph.dijkstra`` over ``adjacency``, whose neighbour lists are sorted):
        deterministic for a given graph.

        Parameters
        ----------
        a, b : int
            The start and end node indices (``[a]`` when they are equal).

        Returns
        -------
        list of int
            The nodes from ``a`` to ``b``, consecutive ones joined by an edge.

        Raises
        ------
        TypeError
            A node index that is not an integer.
        IndexError
            A node index out of range.
        ValueError
            ``b`` is unreachable from ``a``.
        """
        a = self._node(a, "start node")
        b = self._node(b, "end node")
        pred = self._predecessors(a)
        if a != b and pred[b] < 0:
            raise ValueError(
                f"graph {self.name!r}: node {b} ({self.ids[b]}) is unreachable from node {a} ({self.ids[a]})"
            )
        out = [b]
        while out[-1] != a:
            out.append(int(pred[out[-1]]))
        out.reverse()
        return out

    def _predecessors(self, a: int) -> np.ndarray:
        """Dijkstra's predecessor row of source ``a`` (-9999 = none), computed once per source."""
        row = self._pred_rows.get(a)
        if row is None:
            from scipy.sparse.csgraph import dijkstra

            _, row = dijkstra(self.adjacency, directed=False, indices=a, return_predecessors=True)
            self._pred_rows[a] = row = _readonly(row)
        return row

    def path_length(self, nodes) -> float:
        """Sum of the shortest-path distances between consecutive nodes (metres).

        Equals the summed edge weights when consecutive nodes are neighbours (or repeats, which
        add 0).

        Parameters
        ----------
        nodes : array_like
            A non-empty 1-D sequence of integer node indices.

        Returns
        -------
        float
            The length in metres; ``inf`` if some step is unreachable; 0.0 for a single node.

        Raises
        ------
        ValueError
            ``nodes`` is empty, not 1-D or not integers.
        IndexError
            A node index out of range.
        """
        idx = np.asarray(nodes)
        if idx.ndim != 1 or idx.size == 0 or idx.dtype == np.bool_ or idx.dtype.kind not in "iu":
            raise ValueError("path_length needs a non-empty 1-D sequence of integer node indices")
        if idx.min() < 0 or idx.max() >= self.num_nodes:
            raise IndexError(f"path_length: node index out of range for {self.num_nodes} nodes")
        return float(self.distances[idx[:-1], idx[1:]].astype(np.float64).sum())

    # --- ids <-> indices -------------------------------------------------------------------

    def encode(self, viewpoints: Iterable[str]) -> np.ndarray:
        """Viewpoint ids -> node indices.

        Parameters
        ----------
        viewpoints : iterable of str
            Viewpoint ids of this graph.

        Returns
        -------
        numpy.ndarray
            int64 node indices, one per id.

        Raises
        ------
        TypeError
            A single string instead of a sequence of ids.
        ~navdtw.graphs.UnknownViewpointError
            An id the graph does not hold (also a ``ValueError`` and a ``KeyError``), named with
            the graph and its position.
        """
        if isinstance(viewpoints, str):
            raise TypeError("encode needs a sequence of viewpoint ids, not a single string")
        viewpoints = list(viewpoints)
        index = self.index
        try:
            return np.fromiter((index[v] for v in viewpoints), dtype=np.int64, count=len(viewpoints))
        except (KeyError, TypeError):
            for k, v in enumerate(viewpoints):
                if not isinstance(v, str) or v not in index:
                    raise UnknownViewpointError(f"scan {self.name!r}: unknown viewpoint {v!r} (position {k})") from None
            raise

    def decode(self, indices) -> list[str]:
        """Node indices -> viewpoint ids.

        Parameters
        ----------
        indices : array_like
            A 1-D sequence of integer node indices (may be empty).

        Returns
        -------
        list of str
            The viewpoint id of each node.

        Raises
        ------
        ValueError
            ``indices`` that are not a 1-D sequence of integers.
        IndexError
            A node index out of range, named with the graph.
        """
        idx = np.asarray(indices)
        if idx.ndim != 1 or (idx.size and (idx.dtype == np.bool_ or idx.dtype.kind not in "iu")):
            raise ValueError("decode needs a 1-D sequence of integer node indices")
        if idx.size and (idx.min() < 0 or idx.max() >= self.num_nodes):
            k = int(np.argmax((idx < 0) | (idx >= self.num_nodes)))
            raise IndexError(f"scan {self.name!r}: node index {idx[k]} out of range for {self.num_nodes} nodes")
        ids = self.ids
        return [ids[i] for i in idx.tolist()]


# --------------------------------------------------------------------------------------------
# GraphSet
# --------------------------------------------------------------------------------------------


class GraphSet:
    """Several scans as one environment index.

    Environment ``k`` is ``scans[k]``; :attr:`distances` is the list of their distance matrices in
    that order, ready for ``navdtw.dtw_batch(..., distances=gs.distances, env=env)``.

    Build with :func:`load_connectivity`, or directly from :class:`NavGraph` objects.

    Parameters
    ----------
    graphs : sequence of NavGraph or dict[str, NavGraph]
        At least one graph: a sequence (each graph's ``name`` is its scan id, so names must be
        unique and non-empty) or a mapping scan id -> graph.

    Raises
    ------
    TypeError
        ``graphs`` neither a sequence nor a mapping, or an item (a mapping value) that is not a
        :class:`NavGraph`.
    ValueError
        No graph, an empty or non-string scan name, a scan given twice.
    """

    def __init__(self, graphs: Sequence[NavGraph] | dict[str, NavGraph]) -> None:
        if isinstance(graphs, Mapping):
            items = list(graphs.items())
        elif isinstance(graphs, Iterable) and not isinstance(graphs, (str, bytes)):
            items = []
            for k, g in enumerate(graphs):
                if not isinstance(g, NavGraph):
                    raise TypeError(f"GraphSet: item {k} is a {type(g).__name__}, not a NavGraph")
                items.append((g.name, g))
        else:
            raise TypeError(
                "GraphSet: graphs must be a sequence of NavGraph or a dict scan -> NavGraph, "
                f"got {type(graphs).__name__}"
            )
        if not items:
            raise ValueError("GraphSet needs at least one graph")
        self._graphs: dict[str, NavGraph] = {}
        for k, (scan, g) in enumerate(items):
            if not isinstance(g, NavGraph):
                raise TypeError(f"GraphSet: item {k} is a {type(g).__name__}, not a NavGraph")
            if not isinstance(scan, str) or not scan:
                raise ValueError(f"GraphSet: item {k} has no scan name")
            if scan in self._graphs:
                raise ValueError(f"GraphSet: scan {scan!r} appears twice")
            self._graphs[scan] = g
        self.scans: list[str] = list(self._graphs)
        self._env = {s: k for k, s in enumerate(self.scans)}

    # --- container protocol ------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.scans)

    def __contains__(self, scan) -> bool:
        return scan in self._graphs

    def __iter__(self) -> Iterator[str]:
        return iter(self.scans)

    def __getitem__(self, scan: str) -> NavGraph:
        try:
            return self._graphs[scan]
        except (KeyError, TypeError):
            raise KeyError(f"unknown scan {scan!r} (this GraphSet holds {len(self)} scans)") from None

    def __repr__(self) -> str:
        return f"GraphSet({len(self)} scans, {sum(len(g) for g in self.graphs)} nodes)"

    @property
    def graphs(self) -> list[NavGraph]:
        """The graphs in environment order."""
        return [self._graphs[s] for s in self.scans]

    def env_of(self, scan: str) -> int:
        """The environment index of ``scan``.

        Parameters
        ----------
        scan : str
            A scan id of this set.

        Returns
        -------
        int
            Its index into ``scans``, :attr:`graphs` and :attr:`distances`.

        Raises
        ------
        KeyError
            A scan this set does not hold.
        """
        try:
            return self._env[scan]
        except (KeyError, TypeError):
            raise KeyError(f"unknown scan {scan!r}") from None

    @property
    def distances(self) -> list[np.ndarray]:
        """Float32 distance matrices in environment order (each computed on first use, cached)."""
        return [g.distances for g in self.graphs]

    def pair_distances(self, env, a, b) -> np.ndarray:
        """d(a[i], b[i]) in the graph of environment ``env[i]`` for every i: one fancy-indexing
        pass per scan.

        The indices are not checked: numpy's ``IndexError`` for one out of range.

        Parameters
        ----------
        env : array_like
            ``[B]`` environment indices.
        a, b : numpy.ndarray
            ``[B]`` integer node indices, local to each pair's scan.

        Returns
        -------
        numpy.ndarray
            float64 ``[B]`` shortest-path distances in metres, ``inf`` where unreachable.
        """
        env = np.asarray(env, dtype=np.int64)
        out = np.empty(len(env), dtype=np.float64)
        for k in np.unique(env):
            sel = env == k
            out[sel] = self.graphs[int(k)].distances[a[sel], b[sel]]
        return out

    # --- encode / decode -----------------------------------------------------------------------

    def encode(
        self,
        scans: str | Sequence[str],
        viewpoint_paths: Sequence[Sequence[str]],
        *,
        names: Sequence[str] | None = None,
    ) -> tuple[np.ndarray, Paths]:
        """Scan ids and viewpoint-id paths -> ``(env, paths)``.

        Parameters
        ----------
        scans : str or sequence of str
            One scan id per path, or a single string for all.
        viewpoint_paths : sequence of sequence of str
            ``B`` paths, each a non-empty list of viewpoint ids of its scan.
        names : sequence of str, optional
            One name per path (e.g. an instruction id), added to error messages.

        Returns
        -------
        env : numpy.ndarray
            int64 ``[B]`` environment index of each path.
        paths : Paths
            int64 node indices, local to each path's scan.

        Raises
        ------
        ValueError
            As many scans (or names) as paths, an unknown scan, a path given as a string, an
            unknown viewpoint, an empty path; each message names the entry index (and its name).
        """
        paths = list(viewpoint_paths)
        b = len(paths)
        scan_list = [scans] * b if isinstance(scans, str) else list(scans)
        if len(scan_list) != b:
            raise ValueError(f"encode: {len(scan_list)} scans for {b} paths")
        if names is not None and len(names) != b:
            raise ValueError(f"encode: {len(names)} names for {b} paths")

        def where(i: int) -> str:
            return f"entry {i} ({names[i]})" if names is not None else f"entry {i}"

        env = np.empty(b, dtype=np.int64)
        lengths = np.empty(b, dtype=np.int64)
        chunks = []
        for i, (scan, path) in enumerate(zip(scan_list, paths)):
            k = self._env.get(scan) if isinstance(scan, str) else None
            if k is None:
                raise ValueError(f"{where(i)}: unknown scan {scan!r}")
            if isinstance(path, str):
                raise ValueError(f"{where(i)}: path must be a list of viewpoint ids, not a string")
            index = self._graphs[scan].index
            try:
                nodes = [index[v] for v in path]
            except (KeyError, TypeError):
                bad = next((v for v in path if not isinstance(v, str) or v not in index), None)
                raise ValueError(f"{where(i)}: unknown viewpoint {bad!r} in scan {scan!r}") from None
            if not nodes:
                raise ValueError(f"{where(i)}: path is empty")
            env[i] = k
            lengths[i] = len(nodes)
            chunks.append(nodes)
        offsets = np.zeros(b + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        values = np.fromiter((v for c in chunks for v in c), dtype=np.int64, count=int(offsets[-1]))
        return env, Paths(values, offsets)

    def decode(self, env, paths: Paths) -> list[list[str]]:
        """``(env, paths)`` -> viewpoint-id lists (the inverse of :meth:`encode`).

        Parameters
        ----------
        env : array_like
            ``[B]`` environment indices, or one index for every path.
        paths : Paths or sequence of array_like
            Node-index paths, local to each path's scan.

        Returns
        -------
        list of list of str
            The viewpoint ids of each path.

        Raises
        ------
        ValueError
            ``env`` of another length than ``paths``, or an environment index out of range; the
            errors of :meth:`Paths.from_list` and :meth:`NavGraph.decode`.
        IndexError
            A node index out of range for its scan.
        """
        env = np.asarray(env)
        if not isinstance(paths, Paths):
            paths = Paths.from_list(paths)
        if env.ndim == 0:
            env = np.full(len(paths), int(env), dtype=np.int64)
        if env.shape != (len(paths),):
            raise ValueError(f"decode: env has shape {env.shape} but there are {len(paths)} paths")
        if len(env) and (env.min() < 0 or env.max() >= len(self)):
            raise ValueError(f"decode: env index out of range for {len(self)} scans")
        graphs = self.graphs
        return [graphs[int(k)].decode(p) for k, p in zip(env, paths)]


def resolve_distances(graphs: GraphSet | None, distances):
    """The distance matrices a scorer uses: ``graphs.distances`` or ``distances``.

    Parameters
    ----------
    graphs : GraphSet or None
        The scans, whose :attr:`GraphSet.distances` are used.
    distances : array_like or sequence of array_like or None
        Matrices given directly. Neither: coordinate paths (``None`` is returned).

    Returns
    -------
    array_like or list of numpy.ndarray or None
        ``distances`` as given, or ``graphs.distances``.

    Raises
    ------
    ValueError
        Both ``graphs`` and ``distances`` are given.
    """
    if graphs is None:
        return distances
    if distances is not None:
        raise ValueError("give graphs= or distances=, not both")
    return graphs.distances


def __getattr__(name: str):
    # Graphs know no file format (docs/design.md): the Matterport3D reader lives in navdtw.datasets.
    if name == "load_connectivity":
        raise AttributeError(
            "navdtw.graphs.load_connectivity moved to the readers in 0.2: use navdtw.load_connectivity "
            "(navdtw.datasets.matterport.load_connectivity)"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------------------------
# DistanceField
# --------------------------------------------------------------------------------------------


class DistanceField:
    """Geodesic distances over a finite point set, for DTW in continuous environments.

    Parameters
    ----------
    points : array_like
        ``[P, D]`` point coordinates, P >= 1, D >= 1, finite (metres, stored as float64).
    distances : array_like
        ``[P, P]`` distances between the points (metres; ``inf`` = unreachable), e.g. shortest
        paths around obstacles. Stored as float32, read-only.

    Raises
    ------
    TypeError
        ``distances`` that are not real numbers.
    ValueError
        ``points`` of another shape or not finite (or not numbers); ``distances`` not square, of
        another size than ``points``, with a NaN or negative entry.

    Notes
    -----
    Straight-line (Euclidean) DTW lets a path that runs through a wall look close to one that goes
    around it. Ilharco et al. (2019) recommend, for continuous environments with obstacles,
    measuring with geodesic distances instead. Snap both paths to the field and score them in node
    mode::

        field = DistanceField.from_grid(free, cell_size=0.25)
        navdtw.dtw(field.snap(ref_xy), field.snap(query_xy), distances=field.distances)

    Resolution matters: a snapped point is up to half a cell diagonal from the true position.
    For habitat (y-up) R2R-CE coordinates, pass the floor-plane columns ``[:, [0, 2]]`` to a 2-D
    field.
    """

    def __init__(self, points, distances) -> None:
        pts = np.array(points, dtype=np.float64)
        if pts.ndim != 2 or pts.shape[0] == 0 or pts.shape[1] < 1:
            raise ValueError(f"points must have shape [P, D] with P >= 1, D >= 1; got {pts.shape}")
        if not np.isfinite(pts).all():
            raise ValueError(f"points[{int(np.argmin(np.isfinite(pts).all(axis=1)))}] is not finite")
        d = check_matrix(distances)
        if d.shape[0] != pts.shape[0]:
            raise ValueError(f"distances is {d.shape[0]} x {d.shape[0]} but there are {pts.shape[0]} points")
        if d.flags.writeable and isinstance(distances, np.ndarray) and np.shares_memory(d, distances):
            d = d.copy()  # the caller could still change its array; share only read-only input
        self.points = _readonly(pts)
        self._distances = _readonly(d)
        from scipy.spatial import cKDTree

        self._tree = cKDTree(pts)

    @classmethod
    def from_points(cls, points, distances) -> DistanceField:
        """Same as the constructor (validated: square, no NaN, no negatives, one row per point).

        Parameters
        ----------
        points : array_like
            ``[P, D]`` point coordinates (metres).
        distances : array_like
            ``[P, P]`` distances between them (metres; ``inf`` = unreachable).

        Returns
        -------
        DistanceField
            The field.

        Raises
        ------
        TypeError, ValueError
            As the constructor.
        """
        return cls(points, distances)

    @classmethod
    def from_graph(cls, graph: NavGraph) -> DistanceField:
        """The nodes of a :class:`NavGraph` with its shortest-path matrix (snap = nearest node).

        Parameters
        ----------
        graph : NavGraph
            The graph; its :attr:`NavGraph.distances` are computed if they are not yet.

        Returns
        -------
        DistanceField
            A field over ``graph.positions``.
        """
        return cls(graph.positions, graph.distances)

    @classmethod
    def from_grid(
        cls,
        occupancy,
        cell_size: float = 1.0,
        origin: Sequence[float] = (0.0, 0.0),
        *,
        corner_cutting: bool = False,
        max_points: int = 20000,
    ) -> DistanceField:
        """A field over the free cells of a 2-D occupancy grid.

        Cell ``(row, col)`` has its centre at ``x = origin[0] + (col + 0.5) * cell_size``,
        ``y = origin[1] + (row + 0.5) * cell_size`` (metres). Free cells are joined to their 8
        neighbours with weight ``cell_size`` (straight) or ``cell_size * sqrt(2)`` (diagonal).
        Shortest paths are computed with Dijkstra; the matrix takes ``4 P^2`` bytes.

        Parameters
        ----------
        occupancy : array_like
            bool ``[H, W]``, True = free (navigable).
        cell_size : float, optional
            Side of a cell in metres (default 1.0); finite and > 0.
        origin : sequence of float, optional
            ``(x, y)`` of the grid's corner before cell ``(0, 0)`` (default ``(0.0, 0.0)``).
        corner_cutting : bool, optional
            ``False`` (the default): a diagonal step needs both cells it passes between to be
            free too (no cutting through a wall's corner).
        max_points : int, optional
            Most free cells accepted (default 20,000, a 1.6 GB matrix): larger grids are refused.

        Returns
        -------
        DistanceField
            One point per free cell (row-major order) with the grid's shortest-path distances.

        Raises
        ------
        TypeError
            ``occupancy`` that is not boolean.
        ValueError
            ``occupancy`` not 2-D or without a free cell, more free cells than ``max_points``, a
            ``cell_size`` that is not finite and > 0, an ``origin`` that is not two finite
            numbers.
        """
        occ = np.asarray(occupancy)
        if occ.dtype != np.bool_:
            raise TypeError(f"occupancy must be a bool [H, W] array (True = free), got dtype {occ.dtype}")
        if occ.ndim != 2:
            raise ValueError(f"occupancy must be 2-D [H, W], got shape {occ.shape}")
        cell = float(cell_size)
        if not (np.isfinite(cell) and cell > 0):
            raise ValueError(f"cell_size must be finite and > 0 (metres), got {cell_size}")
        org = np.asarray(origin, dtype=np.float64)
        if org.shape != (2,) or not np.isfinite(org).all():
            raise ValueError(f"origin must be two finite numbers (x, y), got {shown(origin)}")
        rows, cols = np.nonzero(occ)
        p = rows.size
        if p == 0:
            raise ValueError("occupancy has no free cell")
        if p > max_points:
            raise ValueError(
                f"occupancy has {p} free cells; the distance matrix would take {4 * p * p / 1e9:.1f} GB "
                f"(raise max_points={max_points} or coarsen the grid)"
            )
        h, w = occ.shape
        node = np.full((h, w), -1, dtype=np.int64)
        node[rows, cols] = np.arange(p)
        src, dst, wt = [], [], []
        # half of the 8 directions: each undirected edge is generated once
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            r2, c2 = rows + dr, cols + dc
            ok = (r2 >= 0) & (r2 < h) & (c2 >= 0) & (c2 < w)
            r1, c1, r2, c2 = rows[ok], cols[ok], r2[ok], c2[ok]
            ok = occ[r2, c2]
            if dr and dc and not corner_cutting:
                ok &= occ[r1 + dr, c1] & occ[r1, c1 + dc]
            src.append(node[r1[ok], c1[ok]])
            dst.append(node[r2[ok], c2[ok]])
            wt.append(np.full(int(ok.sum()), cell * (np.sqrt(2.0) if dr and dc else 1.0)))
        s, t, ww = np.concatenate(src), np.concatenate(dst), np.concatenate(wt)
        import scipy.sparse as sp
        from scipy.sparse.csgraph import shortest_path as _cs_shortest_path

        adj = sp.csr_matrix((ww, (s, t)), shape=(p, p))
        d = _cs_shortest_path(adj, method="D", directed=False).astype(np.float32)
        pts = np.stack([org[0] + (cols + 0.5) * cell, org[1] + (rows + 0.5) * cell], axis=1)
        return cls(pts, d)

    @property
    def distances(self) -> np.ndarray:
        """Float32 ``[P, P]`` distance matrix (metres, read-only)."""
        return self._distances

    @property
    def num_points(self) -> int:
        return int(self.points.shape[0])

    def __len__(self) -> int:
        return self.num_points

    @property
    def dim(self) -> int:
        """Coordinate dimension D."""
        return int(self.points.shape[1])

    def __repr__(self) -> str:
        return f"DistanceField({self.num_points} points, {self.dim}-D)"

    def snap(self, coords) -> np.ndarray:
        """Index of the nearest field point (Euclidean) for each row of ``coords``.

        Ties go to the point that ``cKDTree`` finds first.

        Parameters
        ----------
        coords : array_like
            ``[n, D]`` positions (metres), finite; D as the field's.

        Returns
        -------
        numpy.ndarray
            int64 ``[n]`` point indices, ready for node-mode DTW over :attr:`distances`.

        Raises
        ------
        ValueError
            ``coords`` not of shape ``[n, D]``, not numbers or not finite.
        """
        c = np.asarray(coords, dtype=np.float64)
        if c.ndim != 2 or c.shape[1] != self.dim:
            raise ValueError(f"coords must have shape [n, {self.dim}], got {c.shape}")
        if not np.isfinite(c).all():
            raise ValueError(f"coords[{int(np.argmin(np.isfinite(c).all(axis=1)))}] is not finite")
        if c.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        _, idx = self._tree.query(c)
        return np.asarray(idx, dtype=np.int64)
