"""A test double for habitat-sim, so that habitat-lab imports and runs navdtw's measures offline.

habitat-sim is not on PyPI (conda or a source build only), and habitat-lab 0.3's ``import habitat``
imports it, with magnum and corrade (its bundled bindings), at module level for the rearrangement
and physics code. :func:`install` (only where habitat-lab is installed and habitat-sim is not)
puts a finder on ``sys.meta_path`` that serves those three packages and any submodule of them as
empty modules whose every attribute is a placeholder class: enough for habitat-lab's imports,
annotations and subclassing, and nothing a measure calls. What the measures call is
:class:`SimDouble`: the agent's position and a geodesic distance.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from types import SimpleNamespace

import numpy as np

#: The packages habitat-lab 0.3 imports from habitat-sim's conda package.
DOUBLED = ("habitat_sim", "magnum", "corrade")


class _Placeholder(type):
    """A placeholder class: any attribute is another placeholder; it subscripts and unions to itself."""

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _placeholder(f"{cls.__qualname__}.{name}")

    def __getitem__(cls, item):
        return cls

    def __or__(cls, other):
        return cls

    def __ror__(cls, other):
        return cls


def _placeholder(qualname: str) -> type:
    return _Placeholder(qualname.rsplit(".", 1)[-1], (), {"__qualname__": qualname, "__init__": lambda *a, **k: None})


class _Module(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = _placeholder(f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] in DOUBLED:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _Module(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


def install() -> bool:
    """Serves the doubled packages where habitat-lab is installed without habitat-sim; True if
    ``import habitat`` can then be tried (habitat-lab is installed)."""
    if importlib.util.find_spec("habitat") is None:
        return False
    if importlib.util.find_spec("habitat_sim") is None and not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
    return True


class SimDouble:
    """The simulator as navdtw's measures see it: ``get_agent_state().position`` (float32, as
    habitat-sim's) and ``geodesic_distance`` (the Euclidean distance to the nearest target, or a
    function given)."""

    def __init__(self, geodesic=None):
        self.position = np.zeros(3, dtype=np.float32)
        self.geodesic = geodesic
        self.geodesic_calls = 0

    def move_to(self, point) -> None:
        self.position = np.asarray(point, dtype=np.float32).copy()

    def get_agent_state(self):
        return SimpleNamespace(position=self.position.copy())

    def geodesic_distance(self, position_a, position_b, episode=None) -> float:
        self.geodesic_calls += 1
        if self.geodesic is not None:
            return float(self.geodesic(position_a, position_b, episode))
        targets = np.atleast_2d(np.asarray(position_b, dtype=np.float64))
        return float(np.min(np.linalg.norm(targets - np.asarray(position_a, dtype=np.float64), axis=1)))

    # What habitat-lab's task and actions call besides (the VLN task's reset and step).
    def reset(self):
        return {}

    def step(self, action):
        return {}

    def step_physics(self, dt):
        pass


def register_simulator(name: str = "NavdtwSimDouble-v0") -> str:
    """Registers :class:`SimDouble` as a habitat ``Simulator`` (a subclass made here, once habitat
    imports), so that habitat-lab's own ``habitat.Env`` runs with it (``habitat.simulator.type``):
    the agent starts each episode at ``episode.start_position``, and each movement action
    (``sim.step`` with an action) takes it to the next point of ``sim.plan(episode)`` (a callable
    set by the test: the seeded agent; ``sim.planned`` holds the points still to come), standing
    still once the plan is spent; ``step(None)`` (the
    STOP action's step) does not move it. Returns the registered name."""
    from habitat.core.registry import registry
    from habitat.core.simulator import SensorSuite, Simulator

    if registry.get_simulator(name) is not None:
        return name

    class EnvSimDouble(SimDouble, Simulator):
        def __init__(self, config=None, geodesic=None, **kwargs):
            SimDouble.__init__(self, geodesic=geodesic)
            self.habitat_config = config
            self.plan = None
            self.previous_step_collided = False
            self._episode = None
            self.planned = []

        @property
        def sensor_suite(self):
            return SensorSuite([])

        @property
        def action_space(self):
            return None

        def reconfigure(self, config, episode=None, *args, **kwargs):
            self.habitat_config = config
            self._episode = episode

        def reset(self):
            self.move_to(self._episode.start_position)
            self.planned = list(self.plan(self._episode)) if self.plan is not None else []
            return {}

        def step(self, action, *args, **kwargs):
            if action is not None and self.planned:
                self.move_to(self.planned.pop(0))
            return {}

        def seed(self, seed):
            pass

        def close(self, *args, **kwargs):
            pass

    registry.register_simulator(EnvSimDouble, name=name)
    return name
