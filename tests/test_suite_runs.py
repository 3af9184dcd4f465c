"""Several runs (seeds) per agent, the probability of improvement, the check against a paper's
reported figures, and the fixed shapes of results.json (issue 20): every new number against an
independent computation (scipy, a plain loop), the interval's coverage in simulation, the
acceptance case (a VLN-CE-style log with NaN and Infinity, two agents, three runs each, a reported
figure) in one ``navdtw compare`` call and in a suite file, and results.json against its schema."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps
from synthetic_suite import make_world
from vlnce_logs import episodes_log, two_agents_three_runs, write_log

import navdtw
from navdtw import stats
from navdtw import suite as S
from navdtw.cli import main
from navdtw.suite.config import parse_reported

SCHEMA = Path(navdtw.__file__).parent / "suite" / "results.schema.json"

# ------------------------------------------------------------------------------------------
# a tiny JSON Schema validator (the keywords results.schema.json uses), so the test needs no
# extra dependency; it is itself tested below on documents that break the schema
# ------------------------------------------------------------------------------------------

_TYPES = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "number": lambda x: isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x),
    "integer": lambda x: isinstance(x, int) and not isinstance(x, bool),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
}
_KNOWN = {
    "$schema", "$id", "$defs", "$ref", "title", "description", "type", "required", "properties",
    "additionalProperties", "items", "enum", "minimum", "maximum", "minItems", "maxItems",
}  # fmt: skip


def validate(doc, schema, root=None, where="$") -> list[str]:
    """The places where ``doc`` breaks ``schema`` (empty: valid)."""
    root = schema if root is None else root
    unknown = set(schema) - _KNOWN
    assert not unknown, f"the test's validator does not know {unknown}"
    if "$ref" in schema:
        node = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            node = node[part]
        return validate(doc, node, root, where)
    errors = []
    if "type" in schema:
        types = [schema["type"]] if isinstance(schema["type"], str) else schema["type"]
        if not any(_TYPES[t](doc) for t in types):
            return [f"{where}: {doc!r:.60} is not {types}"]
    if "enum" in schema and doc not in schema["enum"]:
        errors.append(f"{where}: {doc!r} not in {schema['enum']}")
    if _TYPES["number"](doc):
        if "minimum" in schema and doc < schema["minimum"]:
            errors.append(f"{where}: {doc} < {schema['minimum']}")
        if "maximum" in schema and doc > schema["maximum"]:
            errors.append(f"{where}: {doc} > {schema['maximum']}")
    if isinstance(doc, dict):
        for key in schema.get("required", []):
            if key not in doc:
                errors.append(f"{where}: missing {key!r}")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, value in doc.items():
            if key in props:
                errors += validate(value, props[key], root, f"{where}.{key}")
            elif extra is False:
                errors.append(f"{where}: unexpected key {key!r}")
            elif isinstance(extra, dict):
                errors += validate(value, extra, root, f"{where}.{key}")
    if isinstance(doc, list):
        if len(doc) < schema.get("minItems", 0) or len(doc) > schema.get("maxItems", len(doc)):
            errors.append(f"{where}: {len(doc)} items")
        for k, item in enumerate(doc):
            if "items" in schema:
                errors += validate(item, schema["items"], root, f"{where}[{k}]")
    return errors


@pytest.fixture(scope="module")
def schema():
    return json.loads(SCHEMA.read_text())


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("logs")
    return folder, two_agents_three_runs(folder)


def _suite_file(folder: Path, files: dict[str, list[Path]], reported: str = '{sr = 0.62, spl = "55%"}') -> Path:
    lines = ["[datasets.rxrce_unseen]", 'dataset = "results"', ""]
    for agent, paths in files.items():
        lines += [f"[agents.{agent}]", "rxrce_unseen = " + json.dumps([p.name for p in paths]), ""]
    lines += ["[agents.mine.reported]", f"rxrce_unseen = {reported}", "", "[settings]", "resamples = 2000"]
    (folder / "suite.toml").write_text("\n".join(lines))
    return folder / "suite.toml"


@pytest.fixture(scope="module")
def accepted(logs, tmp_path_factory):
    folder, files = logs
    out = tmp_path_factory.mktemp("out")
    return out, S.run(_suite_file(folder, files), out, progress=False)


# ------------------------------------------------------------------------------------------
# results.json: fixed shapes, for every data set kind
# ------------------------------------------------------------------------------------------


def test_the_validator_finds_what_breaks_the_schema(schema, accepted):
    _, results = accepted
    doc = json.loads(json.dumps(results))
    assert validate(doc, schema) == []
    ds = doc["datasets"]["rxrce_unseen"]
    del ds["agents"]["mine"]["sr"]["runs"]
    ds["comparisons"][0]["p_improvement"]["value"] = 1.5
    ds["reported"]["mine"]["sr"]["inside"] = "yes"
    ds["extra"] = 1
    errors = validate(doc, schema)
    assert len(errors) == 4, errors
    assert any("missing 'runs'" in e for e in errors) and any("1.5 > 1" in e for e in errors)


def test_results_json_follows_its_schema_for_results_tables_and_graph_kinds(schema, accepted, tmp_path):
    out, _ = accepted
    assert validate(json.loads((out / "results.json").read_text()), schema) == []
    world = make_world(tmp_path)  # an r2r data set on grid scans; "mixed" has three runs
    (world / "suite.toml").write_text(
        "\n".join(
            [
                "[datasets.grid]",
                'dataset = "r2r"',
                'split = "data/split.json"',
                'connectivity = "data/connectivity"',
                "[agents.mixed]",
                'grid = ["runs/oracle.json", "runs/near.json", "runs/lost.json"]',
                "[agents.lost]",
                'grid = "runs/lost.json"',
                "[agents.mixed.reported]",
                'grid = {sr = "70%", ne = 1.0}',
                "[settings]",
                "resamples = 500",
                "baseline_walks = 500",
            ]
        )
    )
    res = S.run(world / "suite.toml", tmp_path / "out", progress=False)
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert validate(doc, schema) == [] and not res["failures"]
    ds = doc["datasets"]["grid"]
    assert ds["dataset"] == "r2r" and ds["resampling"] == "path"
    assert len(ds["agents"]["mixed"]["sr"]["runs"]) == 3 and ds["agents"]["lost"]["sr"]["runs"] is None
    assert set(ds["reported"]["mixed"]) == {"sr", "ne"}
    # the mean over runs of the run means; each run is the agent of that file
    single = S.run(world / "suite.toml", None, progress=False, report=False)  # same numbers again
    assert single["datasets"] == res["datasets"]
    one = {}
    for name in ("oracle", "near", "lost"):
        (world / "one.toml").write_text(
            (world / "suite.toml").read_text().split("[agents.mixed]")[0]
            + f'[agents.a]\ngrid = "runs/{name}.json"\n[settings]\nresamples = 500\nbaseline_walks = 0\n'
        )
        one[name] = S.run(world / "one.toml", None, progress=False, report=False)["datasets"]["grid"]["agents"]["a"]
    for m, v in ds["agents"]["mixed"].items():
        runs = [one[name][m]["mean"] for name in ("oracle", "near", "lost")]
        assert v["runs"] == pytest.approx(runs, abs=1e-12)
        assert v["mean"] == pytest.approx(np.mean(runs), abs=1e-12)
        assert v["runs_sd"] == pytest.approx(np.std(runs, ddof=1), abs=1e-12)
    # provenance lists every run file
    runs = [i for i in doc["provenance"]["inputs"] if i["agent"] == "mixed"]
    assert [(Path(i["path"]).name, i["run"]) for i in runs] == [("oracle.json", 0), ("near.json", 1), ("lost.json", 2)]


# ------------------------------------------------------------------------------------------
# several runs: the interval over episodes and runs against a plain loop and scipy
# ------------------------------------------------------------------------------------------


def test_runs_interval_against_a_plain_loop_and_scipy():
    rng = np.random.default_rng(3)
    n, runs = 90, 3
    clusters = np.repeat(np.arange(30), 3)
    y = rng.normal(0.5, 0.3, (n, runs)) + rng.normal(0, 0.05, runs)
    y[5, 1] = np.inf  # left out of run 1's mean
    r = stats.runs_intervals(y, [[0, 1, 2]], resamples=4000, method="percentile", seed=7, clusters=clusters)
    means = [y[np.isfinite(y[:, k]), k].mean() for k in range(runs)]
    assert r.run_means[0] == pytest.approx(means, abs=1e-12)
    assert r.mean[0] == pytest.approx(np.mean(means), abs=1e-12)
    assert r.run_sd[0] == pytest.approx(np.std(means, ddof=1), abs=1e-12)
    # the episode term: a plain loop over cluster resamples, each run's mean over its finite values
    boot = []
    for _ in range(4000):
        pick = rng.integers(0, 30, 30)
        rows = np.concatenate([np.flatnonzero(clusters == c) for c in pick])
        boot.append(np.mean([y[rows, k][np.isfinite(y[rows, k])].mean() for k in range(runs)]))
    lo, hi = np.quantile(boot, [0.025, 0.975])
    width = hi - lo
    assert abs(r.episode_lo[0] - lo) < 0.06 * width and abs(r.episode_hi[0] - hi) < 0.06 * width
    # over episodes and seeds: Student's t around the mean, the documented variance by a plain loop
    # over clusters and runs on the episodes finite in every run (episode 5 is not)
    keep = [e for e in range(n) if np.isfinite(y[e]).all()]
    x, cl = y[keep], clusters[keep]
    ep = x.mean(axis=1)
    sums = [sum(ep[q] - ep.mean() for q in range(len(keep)) if cl[q] == c) for c in range(30)]
    v_ep = 30 / 29 * sum(t * t for t in sums) / len(keep) ** 2
    m = x.mean(axis=0)
    res = x - ep[:, None] - m + m.mean()
    by = [[sum(res[q, k] for q in range(len(keep)) if cl[q] == c) for k in range(runs)] for c in range(30)]
    w = sum(t * t for row in by for t in row) / ((runs - 1) * 29) * 30 / len(keep) ** 2
    v = v_ep + max(0.0, m.var(ddof=1) - w) / runs
    df = v**2 / (v_ep**2 / 29 + (m.var(ddof=1) / runs) ** 2 / (runs - 1))
    theta = np.mean(means)
    # Satterthwaite's df, shrunk so that the interval covers at every seed variance (one agent)
    assert r.se[0] == pytest.approx(math.sqrt(v), rel=1e-10) and 0.4 * df <= r.df[0] <= df * (1 + 1e-10)
    assert r.df[0] == pytest.approx(stats._runs._calibrated_df(v_ep, w, runs, df, 0.95), rel=1e-10)
    half = sps.t.ppf(0.975, r.df[0]) * math.sqrt(v)
    assert (r.lo[0], r.hi[0]) == pytest.approx((theta - half, theta + half), abs=1e-12)
    # one run: the interval is the column's own (the draws of stats.analyze)
    one = stats.runs_intervals(y[:, :1], [[0]], resamples=2000, seed=7, clusters=clusters)
    col = stats.bootstrap_means(y[:, :1], resamples=2000, seed=7, clusters=clusters)
    assert one.lo[0] == pytest.approx(col.lo[0], abs=1e-12) and one.hi[0] == pytest.approx(col.hi[0], abs=1e-12)
    assert np.isnan(one.run_sd[0])


def _coverage_runs(runs: int, reps: int, sigma_run: float, seed: int):
    """Coverage of the interval over episodes and runs (and of the episode interval alone) of an
    agent's success rate: episodes of difficulty p_e ~ Beta(2, 2), a run effect b_r ~ N(0,
    sigma_run) on every episode's success probability, SR_er ~ Bernoulli(clip(p_e + b_r)). The
    truth, the expected SR over episodes and runs, is 0.5 by symmetry."""
    rng = np.random.default_rng(seed)
    n = 200
    p = rng.beta(2.0, 2.0, (reps, 1, n))
    b = rng.normal(0.0, sigma_run, (reps, runs, 1))
    y = (rng.random((reps, runs, n)) < np.clip(p + b, 0.0, 1.0)).astype(np.float64)
    matrix = y.reshape(reps * runs, n).T
    groups = [list(range(k * runs, (k + 1) * runs)) for k in range(reps)]
    r = stats.runs_intervals(matrix, groups, resamples=1000, seed=seed)
    both = np.mean((r.lo <= 0.5) & (r.hi >= 0.5))
    episodes = np.mean((r.episode_lo <= 0.5) & (r.episode_hi >= 0.5))
    return both, episodes


@pytest.mark.parametrize("runs", [3, 5])
def test_coverage_of_the_interval_over_episodes_and_runs(runs):
    """docs/statistics.md, "Several runs": 1,000 simulated agents per case; the interval over
    episodes and runs covers the truth at least 95% of the time (a little more where both terms
    count: it is conservative there); the episode interval alone does not when runs differ."""
    both, episodes = _coverage_runs(runs, 1000, 0.06, seed=runs)
    assert 0.93 <= both <= 0.99
    assert episodes < 0.90  # the run effect is real: the episode interval misses it
    both, episodes = _coverage_runs(runs, 1000, 0.0, seed=10 + runs)  # no run effect
    assert 0.93 <= both <= 0.999 and 0.93 <= episodes <= 0.97  # conservative: the runs term counts noise too


# ------------------------------------------------------------------------------------------
# the probability of improvement against a plain loop
# ------------------------------------------------------------------------------------------


def _improvement_loop(a, b, higher=True) -> float:
    wins = ties = n = 0
    for x, y in zip(a, b):
        if not (math.isfinite(x) and math.isfinite(y)):
            continue
        n += 1
        if x == y:
            ties += 1
        elif (x > y) == higher:
            wins += 1
    return (wins + 0.5 * ties) / n


def test_probability_of_improvement_against_a_plain_loop():
    rng = np.random.default_rng(11)
    n = 120
    clusters = np.repeat(np.arange(40), 3)
    m = np.column_stack([rng.integers(0, 4, n), rng.integers(0, 4, n), rng.normal(5, 2, n)]).astype(float)
    m[[3, 50], 2] = np.inf
    pairs = [(0, 1), (1, 0), (2, 0)]
    r = stats.probability_of_improvement(
        m, pairs, higher_is_better=[True, True, False], resamples=4000, method="percentile", seed=2, clusters=clusters
    )
    for q, ((i, j), higher) in enumerate(zip(pairs, [True, True, False])):
        assert r.mean[q] == pytest.approx(_improvement_loop(m[:, i], m[:, j], higher), abs=1e-12)
    assert r.mean[0] + r.mean[1] == pytest.approx(1.0)  # ties count half on both sides
    boot = []
    for _ in range(4000):
        rows = np.concatenate([np.flatnonzero(clusters == c) for c in rng.integers(0, 40, 40)])
        boot.append(_improvement_loop(m[rows, 2], m[rows, 0], False))
    lo, hi = np.quantile(boot, [0.025, 0.975])
    assert abs(r.lo[2] - lo) < 0.06 * (hi - lo) and abs(r.hi[2] - hi) < 0.06 * (hi - lo)


# ------------------------------------------------------------------------------------------
# the acceptance case: VLN-CE-style logs with NaN and Infinity, 2 agents x 3 runs, a paper's figures
# ------------------------------------------------------------------------------------------


def test_acceptance_numbers_against_hand_counts_and_loops(logs, accepted):
    _, files = logs
    _, results = accepted
    assert results["failures"] == []
    ds = results["datasets"]["rxrce_unseen"]
    rows = {a: [[json.loads(line) for line in p.read_text().splitlines()] for p in paths] for a, paths in files.items()}
    # the policy's counts by hand: Infinity distances left out (over the runs), SPL NaN with success 0 is 0
    for agent, runs in rows.items():
        infinite = sum(1 for run in runs for r in run if r["distance_to_goal"] == math.inf)
        assert ds["agents"][agent]["ne"]["left_out"] == infinite > 0
        spl = [np.mean([0.0 if r["spl"] != r["spl"] else r["spl"] for r in run]) for run in runs]
        assert ds["agents"][agent]["spl"]["runs"] == pytest.approx(spl, abs=1e-12)
        ne = [np.mean([r["distance_to_goal"] for r in run if r["distance_to_goal"] != math.inf]) for run in runs]
        assert ds["agents"][agent]["ne"]["mean"] == pytest.approx(np.mean(ne), abs=1e-12)
    unreachable = {
        k for runs in rows.values() for run in runs for k, r in enumerate(run) if r["distance_to_goal"] == math.inf
    }
    (c,) = [c for c in ds["comparisons"] if c["metric"] == "ne"]
    assert c["dropped"] == len(unreachable)
    # the comparison over episodes and seeds (both agents in 3 runs), and rliable's probability of
    # improvement: per episode, the average over the 3 x 3 pairs of runs; then the mean
    success = {a: np.array([[r["success"] for r in run] for run in runs]).T for a, runs in rows.items()}
    (c,) = [c for c in ds["comparisons"] if c["metric"] == "sr"]
    assert c["diff"] == pytest.approx(success["mine"].mean() - success["base"].mean(), abs=1e-12)
    assert c["test"] == "runs t" and c["over"] == "episodes and seeds" and c["df"] > 0
    assert c["p"] == pytest.approx(stats.runs_difference(success["mine"], success["base"]).p, rel=1e-12)
    pairs = [
        np.mean([_improvement_loop([x], [y]) for x in a for y in b]) for a, b in zip(success["mine"], success["base"])
    ]
    assert c["p_improvement"]["value"] == pytest.approx(np.mean(pairs), abs=1e-12)
    lo, hi = c["p_improvement"]["ci"]
    assert lo < c["p_improvement"]["value"] < hi
    # reported vs measured: the gap, the standard error over episodes and seeds, the verdict
    sr = ds["reported"]["mine"]["sr"]
    v = ds["agents"]["mine"]["sr"]
    assert sr["reported"] == 0.62 and sr["measured"] == v["mean"] and sr["ci"] == v["ci"] and sr["runs"] == 3
    assert sr["gap"] == pytest.approx(v["mean"] - 0.62)
    assert sr["se"] == v["runs_se"] and sr["gap_se"] == pytest.approx(sr["gap"] / v["runs_se"])
    half = sps.t.ppf(0.975, v["runs_df"]) * v["runs_se"]
    assert v["ci"] == pytest.approx([v["mean"] - half, v["mean"] + half], abs=1e-12)
    assert sr["inside"] == (v["ci"][0] <= 0.62 <= v["ci"][1])
    spl = ds["reported"]["mine"]["spl"]
    assert spl["reported"] == 0.55 and spl["inside"] is False
    side = "above" if spl["reported"] > spl["measured"] else "below"
    assert spl["verdict"] == (
        f"outside the 95% interval over episodes and seeds (3 runs): the reported figure is "
        f"{abs(spl['gap_se']):.1f} standard errors {side} the measured mean"
    )


def test_one_compare_call_gives_the_suite_files_numbers(logs, accepted, tmp_path, monkeypatch, capsys):
    folder, _ = logs
    _, results = accepted
    monkeypatch.chdir(folder)
    code = main(
        [
            "compare",
            "--runs",
            "mine=mine_seed*.jsonl",
            "--runs",
            "base=base_seed0.jsonl,base_seed1.jsonl,base_seed2.jsonl",
            "--dataset",
            "results",
            "--reported",
            "sr=0.62,spl=55%",
            "--resamples",
            "2000",
            "--out",
            str(tmp_path / "out"),
            "--no-progress",
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0
    cli = json.loads((tmp_path / "out" / "results.json").read_text())
    mine = cli["datasets"]["results"]
    ref = results["datasets"]["rxrce_unseen"]
    assert mine["agents"] == ref["agents"] and mine["comparisons"] == ref["comparisons"]
    assert mine["reported"] == ref["reported"]
    assert "reported vs measured" in printed and "mine: the mean over its 3 runs" in printed
    md = (tmp_path / "out" / "leaderboard.md").read_text()
    assert "Reported vs measured" in md and "P(A better)" in md and "(sd " in md


# ------------------------------------------------------------------------------------------
# the reported figures: one form, clear errors
# ------------------------------------------------------------------------------------------


def test_reported_figures_are_fractions_or_say_percent():
    assert parse_reported("sr=0.558,SPL=51.2%") == {"sr": 0.558, "spl": pytest.approx(0.512)}
    assert parse_reported({"success": 0.5, "distance_to_goal": 5.2, "TCR": 3}, columns=True) == {
        "sr": 0.5,
        "ne": 5.2,
        "TCR": 3.0,
    }
    with pytest.raises(
        ValueError,
        match=r"sr = 55.8: SR is a rate: write a fraction in \[0, 1\] \(0.558\) or a percentage with % \(55.8%\)",
    ):
        parse_reported("sr=55.8")
    with pytest.raises(ValueError, match="NE is not a rate"):
        parse_reported("ne=5%")
    with pytest.raises(ValueError, match="a distance must be >= 0"):
        parse_reported({"ne": -1})
    with pytest.raises(ValueError, match="expected a number"):
        parse_reported({"sr": "high"})
    with pytest.raises(ValueError, match="a percentage must lie in"):
        parse_reported("sr=120%")


def test_cli_errors_for_runs_and_reported(logs, monkeypatch, capsys):
    folder, _ = logs
    monkeypatch.chdir(folder)
    assert main(["compare", "mine_seed0.jsonl", "--dataset", "results", "--reported", "sr=62"]) == 2
    assert "write a fraction in [0, 1] (0.62) or a percentage with % (62%)" in capsys.readouterr().err
    assert main(["compare", "--runs", "mine=nothing*.jsonl", "--dataset", "results"]) == 2
    assert "--runs mine: no file matches 'nothing*.jsonl'" in capsys.readouterr().err
    assert main(["compare", "--runs", "mine=mine_seed0.jsonl,mine_seed0.jsonl", "--dataset", "results"]) == 2
    assert "is named twice" in capsys.readouterr().err
    assert main(["compare", "mine_seed0.jsonl", "--dataset", "results", "--reported", "x:sr=0.5"]) == 2
    assert "no agent 'x'" in capsys.readouterr().err
    assert main(["compare", "--dataset", "results"]) == 2
    assert "give predictions files" in capsys.readouterr().err


def test_an_unknown_reported_metric_is_an_error_listing_the_known_ones(logs, tmp_path, monkeypatch, capsys):
    # was: accepted, exit 0, a row "not measured: a has no sucess on this data set"
    with pytest.raises(
        ValueError, match=r"^unknown metric 'sucess' \(did you mean success\?\); the known metrics: pl, ne,"
    ):
        parse_reported("sucess=0.6")
    assert "TCR" in parse_reported("TCR=3", columns=True)  # a results table's own column: checked once read
    # a kind that measures the registry's metrics: refused before anything runs (CLI and suite file)
    world = make_world(tmp_path / "w")
    monkeypatch.chdir(world)
    r2r = ["--dataset", "r2r", "--split", "data/split.json", "--connectivity", "data/connectivity"]
    assert main(["compare", "runs/oracle.json", "runs/near.json", *r2r, "--reported", "oracle:sucess=0.6"]) == 2
    err = capsys.readouterr().err
    assert "--reported oracle: unknown metric 'sucess' (did you mean success?); the known metrics: pl, ne, one" in err
    (world / "s.toml").write_text(
        '[datasets.d]\ndataset = "r2r"\nsplit = "data/split.json"\nconnectivity = "data/connectivity"\n'
        '[agents.a]\nd = "runs/oracle.json"\n[agents.a.reported]\nd = {sucess = 0.6}\n'
    )
    with pytest.raises(S.SuiteError, match=r"s.toml: agents.a.reported.d: unknown metric 'sucess' \(did you mean"):
        S.load_suite(world / "s.toml")
    # a results data set: names are checked against the registry and the tables' columns once read
    folder, _ = logs
    monkeypatch.chdir(folder)
    assert (
        main(["compare", "mine_seed0.jsonl", "--dataset", "results", "--reported", "sucess=0.6", "--no-progress"]) == 1
    )
    err = capsys.readouterr().err
    assert "failed: mine_seed0 on results: reported figures: unknown metric 'sucess' (did you mean success?)" in err
    rows = [{"episode_id": k, "success": 1.0, "tcr": 0.1 * (k % 3)} for k in range(20)]
    table = write_log(tmp_path / "own.jsonl", rows)
    res = S.compare(
        [table], dataset="results", progress=False, settings={"resamples": 100}, reported={"own": "tcr=0.1"}
    )
    ours = res["datasets"]["results"]["reported"]["own"]["tcr"]
    assert not res["failures"] and ours["measured"] == pytest.approx(np.mean([r["tcr"] for r in rows]))


def test_the_per_run_means_are_pointed_to_only_where_written(logs, tmp_path):
    # was: "(per-run means in leaderboard.md and results.json)" with no --out, where nothing is written
    _, files = logs
    settings = {"resamples": 200, "baseline_walks": 0}
    res = S.compare([], runs=files, dataset="results", progress=False, settings=settings)
    text = S.format_leaderboard(res)
    assert (
        "mine: the mean over its 3 runs; the interval covers episodes and runs (per-run means written by --out DIR)"
        in text
    )
    assert "leaderboard.md" not in text
    res = S.compare([], runs=files, dataset="results", progress=False, settings=settings, out_dir=tmp_path / "out")
    assert "(per-run means in leaderboard.md and results.json)" in S.format_leaderboard(res)
    assert "the mean of each run" in (tmp_path / "out" / "leaderboard.md").read_text()


def test_runs_of_one_agent_must_score_the_same_episodes(tmp_path):
    a = write_log(tmp_path / "a0.jsonl", episodes_log(50))
    b = write_log(tmp_path / "a1.jsonl", episodes_log(48, run=1))
    c = write_log(tmp_path / "c.jsonl", episodes_log(50, skill=1.0))
    res = S.compare([c], runs={"a": [a, b]}, dataset="results", progress=False, settings={"resamples": 100})
    (f,) = res["failures"]
    assert f["agent"] == "a" and f["file"].endswith("a1.jsonl")
    assert f["error"] == (
        "a1.jsonl: no row for 49, 50 (2 in all), which a0.jsonl has; the runs of agent a must score the same episodes"
    )
    assert list(res["datasets"]["results"]["agents"]) == ["c"]


def test_suite_file_errors_for_runs_and_reported(tmp_path):
    write_log(tmp_path / "a.jsonl", episodes_log(20))
    base = '[datasets.d]\ndataset = "results"\n[agents.a]\n'
    for body, message in [
        ('d = "x*.jsonl"', r"agents.a.d: no file matches 'x\*.jsonl'"),
        ("d = []", "agents.a.d: an empty list of predictions files"),
        ('d = ["a.jsonl", "a*.jsonl"]', "is named twice"),
        (
            'd = "a.jsonl"\n[agents.a.reported]\ne = {sr = 0.5}',
            "agents.a.reported.e: agent 'a' has no predictions for data set 'e'",
        ),
        ('d = "a.jsonl"\n[agents.a.reported]\nd = {sr = 55}', r"agents.a.reported.d: sr = 55: SR is a rate"),
    ]:
        (tmp_path / "s.toml").write_text(base + body)
        with pytest.raises(S.SuiteError, match=message):
            S.load_suite(tmp_path / "s.toml")


# ------------------------------------------------------------------------------------------
# results-table columns outside the registry: their direction reaches the marks, the metric selection
# ------------------------------------------------------------------------------------------


def test_a_direction_given_for_a_column_marks_it(tmp_path):
    rows = {a: [{"episode_id": k, "collisions": float(k % 3 + shift), "success": 1.0} for k in range(40)]
            for a, shift in (("a", 0), ("b", 2))}  # fmt: skip
    files = [write_log(tmp_path / f"{a}.jsonl", r) for a, r in rows.items()]
    res = S.compare(files, dataset="results", columns=["collisions=-"], progress=False, settings={"resamples": 500},
                    metrics="collisions")  # fmt: skip
    ds = res["datasets"]["results"]
    assert ds["metrics"]["collisions"] == {
        "label": "collisions",
        "unit": "",
        "rate": False,
        "higher_is_better": False,
        "staying_wins": False,
    }
    assert S.leaderboard_marks(ds)["collisions"]["best"] == ["a"]
    assert "collisions↓" in S.format_leaderboard(res)
    (c,) = ds["comparisons"]
    assert c["p_improvement"]["value"] == 1.0  # a has fewer collisions on every episode
    with pytest.raises(S.SuiteError, match="unknown metric 'collisions'"):
        S.load_suite({"datasets": {"d": {"dataset": "ndh", "split": str(files[0]), "connectivity": str(tmp_path)}},
                      "agents": {"a": {"d": str(files[0])}}, "metrics": ["collisions"]})  # fmt: skip


def test_equal_agents_with_different_seeds_are_not_told_apart(tmp_path, monkeypatch, capsys):
    """Issue 26's reproduction: two agents of the same skill whose seeds happen to differ (A's three
    runs all lucky, B's spread wide) compared with ``navdtw compare --runs``: the per-episode means
    over runs gave p = 1e-8 and no dagger; over episodes and seeds they cannot be told apart."""
    for agent, effects in (("A", (0.45, 0.5, 0.4)), ("B", (-0.7, 0.8, -0.3))):
        for r, effect in enumerate(effects):
            write_log(
                tmp_path / f"{agent}{r}.jsonl", episodes_log(400, skill=0.3, run=10 * r + ord(agent), run_effect=effect)
            )
    monkeypatch.chdir(tmp_path)
    args = ["compare", "--runs", "A=A*.jsonl", "--runs", "B=B*.jsonl", "--dataset", "results", "--resamples", "2000"]
    assert main([*args, "--out", "out", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    ds = json.loads((tmp_path / "out" / "results.json").read_text())["datasets"]["results"]
    (c,) = [c for c in ds["comparisons"] if c["metric"] == "sr"]
    runs = {}
    for a in "AB":
        logs = [(tmp_path / f"{a}{k}.jsonl").read_text().splitlines() for k in range(3)]
        runs[a] = np.array([[json.loads(line)["success"] for line in log] for log in logs]).T
    old = stats.runs_difference(runs["A"].mean(axis=1, keepdims=True), runs["B"].mean(axis=1, keepdims=True))
    assert old.p < 1e-4  # the per-episode means over runs: "significant"
    assert c["test"] == "runs t" and c["p"] > 0.05 and c["ci"][0] < 0 < c["ci"][1]
    assert S.leaderboard_marks(ds)["sr"]["tied"] == ["B"]  # the lower agent gets its dagger
    assert "cover episodes and seeds" in printed
