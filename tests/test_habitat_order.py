"""``navdtw order``'s order in a habitat loop (navdtw.habitat's order functions), against
habitat-lab's own ``EpisodeIterator`` and ``Env`` and the files ``navdtw order`` writes.

Needs habitat-lab (tools/check_habitat.sh's venv); skipped without it. The episodes are a small
R2R-CE-format split written here (habitat-lab's ``R2RVLN-v1`` reader loads it), so the tests need
no data set.
"""

from __future__ import annotations

import copy
import gzip
import json

import numpy as np
import pytest
from habitat_double import install, register_simulator

if not install():
    pytest.skip("habitat-lab is not installed (tools/check_habitat.sh builds a venv with it)", allow_module_level=True)

habitat = pytest.importorskip("habitat")
nh = pytest.importorskip("navdtw.habitat")

from habitat.core.dataset import EpisodeIterator  # noqa: E402
from habitat.datasets import make_dataset  # noqa: E402

from navdtw.order import Order, load_order, write_order  # noqa: E402

SCENES = ("aaa", "bbb", "ccc", "ddd")


def write_split(folder, n: int = 60, seed: int = 3):
    """An R2R-CE-format split of ``n`` episodes over four scenes, ids not in file order."""
    rng = np.random.default_rng(seed)
    ids = rng.permutation(np.arange(100, 100 + 3 * n, 3))[:n]
    episodes = []
    for k, eid in enumerate(ids):
        start = rng.normal(0, 3, 3).round(3).tolist()
        goal = rng.normal(0, 3, 3).round(3).tolist()
        scene = SCENES[k % 4 if k < n // 2 else int(rng.integers(4))]
        episodes.append(
            {
                "episode_id": int(eid),
                "trajectory_id": int(k),
                "scene_id": f"mp3d/{scene}/{scene}.glb",
                "start_position": start,
                "start_rotation": [0.0, 0.0, 0.0, 1.0],
                "info": {"geodesic_distance": 1.0},
                "goals": [{"position": goal, "radius": 3.0}],
                "reference_path": [start, goal],
                "instruction": {"instruction_text": "go", "instruction_tokens": [1, 2]},
            }
        )
    path = folder / "val_unseen.json.gz"
    with gzip.open(path, "wt") as f:
        json.dump({"episodes": episodes, "instruction_vocab": {"word_list": ["a", "b"]}}, f)
    return path


def make_config(split_path, *overrides: str):
    return habitat.get_config(
        "benchmark/nav/vln_r2r.yaml",
        overrides=[
            f"habitat.dataset.data_path='{split_path.parent}/{{split}}.json.gz'",
            "habitat.dataset.split=val_unseen",
            f"habitat.dataset.scenes_dir='{split_path.parent}'",
            *overrides,
        ],
    )


@pytest.fixture
def split(tmp_path):
    return write_split(tmp_path)


@pytest.fixture
def order(tmp_path, split):
    write_order(split, tmp_path / "order", seed=7, workers=3)
    return load_order(tmp_path / "order" / "order.json")


def ids(episodes) -> list[str]:
    return [str(e.episode_id) for e in episodes]


def lines(path) -> list[str]:
    return path.read_text().split()


# ---- the share and the episodes in memory ----


@pytest.mark.parametrize("world_size", [1, 2, 3])
def test_share_is_the_worker_file_navdtw_order_writes(tmp_path, split, world_size):
    write_order(split, tmp_path / "o", seed=11, workers=world_size)
    order = load_order(tmp_path / "o" / "order.json")
    for rank in range(world_size):
        want = lines(tmp_path / "o" / (f"order.worker{rank}of{world_size}.txt" if world_size > 1 else "order.txt"))
        assert [i for _, i in nh.order_share(order, rank=rank, world_size=world_size)] == want
    every = sorted(k for r in range(world_size) for k, _ in nh.order_share(order, rank=r, world_size=world_size))
    assert every == list(range(len(order.units)))


def test_dataset_episodes_put_in_the_order_without_a_copy(tmp_path, split, order):
    config = make_config(split)
    dataset = make_dataset(config.habitat.dataset.type, config=config.habitat.dataset)
    before = {str(e.episode_id): e for e in dataset.episodes}
    assert ids(dataset.episodes) != order.ids  # the file's order is not the order
    got = nh.order_episodes(dataset, order, rank=1, world_size=3, split=split)
    want = lines(tmp_path / "order" / "order.worker1of3.txt")
    assert ids(dataset.episodes) == ids(got) == want
    assert all(e is before[str(e.episode_id)] for e in got)  # the loaded episodes, not copies
    listed = list(before.values())
    assert ids(nh.order_episodes(listed, order)) == order.ids and ids(listed) == list(before)  # a list: left as is


def test_episodes_of_another_split_are_named(split, order):
    config = make_config(split)
    dataset = make_dataset(config.habitat.dataset.type, config=config.habitat.dataset)
    first = order.ids[0]
    missing = [e for e in dataset.episodes if str(e.episode_id) != first]
    with pytest.raises(
        ValueError, match=rf"^episode {first} \(position 0 of the order order.json\) is not in the episodes"
    ):
        nh.order_episodes(missing, order)
    stranger = copy.copy(dataset.episodes[0])
    stranger.episode_id = "x9"
    extra = [*dataset.episodes, stranger]
    with pytest.raises(ValueError, match=r"^episode x9 of the episodes given is not in the order order.json"):
        nh.order_episodes(extra, order)
    with pytest.raises(ValueError, match=r"is in the episodes twice"):
        nh.order_episodes(dataset.episodes + dataset.episodes[:1], order)


def test_split_file_must_be_the_orders(tmp_path, split, order):
    (tmp_path / "other").mkdir()
    other = write_split(tmp_path / "other", seed=4)
    with pytest.raises(ValueError, match=r"^val_unseen.json.gz: not the split of the order order.json"):
        nh.order_episodes([], order, split=other)
    with pytest.raises(FileNotFoundError, match="split file not found"):
        nh.order_episodes([], order, split=tmp_path / "nope.json.gz")


@pytest.mark.parametrize(("rank", "world_size"), [(2, 2), (-1, 2), (0, 0), (True, 2)])
def test_bad_rank_is_named(order, rank, world_size):
    with pytest.raises(ValueError, match="rank"):
        nh.order_share(order, rank=rank, world_size=world_size)


# ---- habitat's EpisodeIterator: which options keep the order ----


def run_iterator(episodes, options, steps_between: int = 0) -> list[str]:
    """The episode ids habitat's EpisodeIterator gives, in order, for one pass (cycle off)."""
    iterator = EpisodeIterator(episodes, cycle=False, seed=5, **options)
    out = []
    for episode in iterator:
        out.append(str(episode.episode_id))
        for _ in range(steps_between):
            iterator.step_taken()
    return out


def test_iterator_options_keep_the_order(split, order):
    config = make_config(split)
    dataset = make_dataset(config.habitat.dataset.type, config=config.habitat.dataset)
    ordered = nh.order_episodes(dataset, order)
    assert run_iterator(ordered, nh.ITERATOR_OPTIONS, steps_between=3) == order.ids
    nh.check_iterator_options(nh.ITERATOR_OPTIONS)


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("shuffle", True),
        ("group_by_scene", True),
        ("num_episode_sample", 60),  # even a "sample" of every episode: np.random.choice permutes them
        ("max_scene_repeat_episodes", 1),
        ("max_scene_repeat_steps", 2),
    ],
)
def test_each_breaking_option_breaks_the_order_and_is_refused(split, order, option, value):
    config = make_config(split)
    dataset = make_dataset(config.habitat.dataset.type, config=config.habitat.dataset)
    ordered = nh.order_episodes(dataset, order)
    options = {**nh.ITERATOR_OPTIONS, option: value}
    assert run_iterator(ordered, options, steps_between=3) != order.ids  # habitat's iterator reorders
    with pytest.raises(
        ValueError,
        match=rf"^these iterator options change the order of the episodes: iterator_options\.{option} is {value}",
    ):
        nh.check_iterator_options(options)
    upper = {k.upper(): v for k, v in options.items()}
    with pytest.raises(ValueError, match=rf"ITERATOR_OPTIONS\.{option.upper()} is {value}"):
        nh.check_iterator_options({"TASK_CONFIG": {"ENVIRONMENT": {"ITERATOR_OPTIONS": upper}}})


def test_a_missing_option_is_the_iterators_default():
    # EpisodeIterator's group_by_scene defaults to True: an options mapping without it reorders
    with pytest.raises(ValueError, match=r"iterator_options\.group_by_scene is True"):
        nh.check_iterator_options({"shuffle": False})


def test_keep_order_on_hydra_and_yacs_configs(split):
    config = make_config(split)
    with pytest.raises(ValueError, match=r"habitat\.environment\.iterator_options\.shuffle is True"):
        nh.check_iterator_options(config)  # habitat-lab 0.3's defaults shuffle and group by scene
    assert nh.keep_order(config) is config
    options = config.habitat.environment.iterator_options
    assert {k: options[k] for k in nh.ITERATOR_OPTIONS} == nh.ITERATOR_OPTIONS
    assert options.cycle is True  # left alone
    nh.check_iterator_options(config)
    nh.check_iterator_options(config.habitat)
    vlnce = {"TASK_CONFIG": {"ENVIRONMENT": {"ITERATOR_OPTIONS": {"CYCLE": True, "SHUFFLE": True}}}}
    nh.keep_order(vlnce)
    assert vlnce["TASK_CONFIG"]["ENVIRONMENT"]["ITERATOR_OPTIONS"] == {
        "CYCLE": True,
        **{k.upper(): v for k, v in nh.ITERATOR_OPTIONS.items()},
    }
    yacs = {"ENVIRONMENT": {"ITERATOR_OPTIONS": {}}}
    nh.keep_order(yacs)
    nh.check_iterator_options(yacs)


def test_env_runs_the_order_and_refuses_a_shuffling_iterator(tmp_path, split, order):
    name = register_simulator()
    config = make_config(split, f"habitat.simulator.type={name}")
    nh.keep_order(config)
    env = habitat.Env(config)
    nh.order_episodes(env, order, rank=2, world_size=3, split=split)
    check = nh.OrderCheck(order, rank=2, world_size=3)
    seen = []
    while not check.finished:
        env.reset()
        check(env.current_episode)
        seen.append(str(env.current_episode.episode_id))
        env.step("stop")
    assert seen == lines(tmp_path / "order" / "order.worker2of3.txt")
    env.reset()  # cycle: the share again, one episode too many
    with pytest.raises(ValueError, match=r"ran at position 20, after the last of the 20 episodes of rank 2's share"):
        check(env.current_episode)
    env.close()
    shuffled = make_config(split, f"habitat.simulator.type={name}")
    env = habitat.Env(shuffled)
    with pytest.raises(
        ValueError,
        match=r"^these iterator options change the order of the episodes: the episode iterator's shuffle is True",
    ):
        nh.order_episodes(env, order)
    env.close()


# ---- the check in the loop ----


def test_order_check_names_the_episode_and_position():
    order = Order(tuple((str(i),) for i in (5, 9, 2, 7, 3)), source="order.json")
    check = nh.OrderCheck(order, rank=0, world_size=2)  # positions 0, 2, 4: 5, 2, 3
    assert check("5") == 0
    message = r"^episode 9 ran at position 1 of rank 0's share \(of 2\) of order.json, where the order has episode 2 "
    with pytest.raises(ValueError, match=message):
        check("9")
    assert check(type("Episode", (), {"episode_id": 2})()) == 1
    assert check.position == 2 and not check.finished
    whole = nh.OrderCheck(order)
    with pytest.raises(
        ValueError, match=r"^episode 9 ran at position 0 of the order of order.json, where the order has episode 5"
    ):
        whole("9")


def test_order_check_resumes_after_the_done_episodes():
    order = Order(tuple((str(i),) for i in (5, 9, 2, 7, 3)), source="order.json")
    check = nh.OrderCheck(order, done={"5", "9"})
    assert check.position == 2 and check("2") == 2
    with pytest.raises(ValueError, match=r"^episode 7 has run already but is not among the first 1 episodes"):
        nh.OrderCheck(order, done={"5", "7"})
