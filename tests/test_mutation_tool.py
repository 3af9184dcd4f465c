"""tools/mutation/python_mutants.py's judging: a mutant that does not compile under the tests'
warnings-as-errors is incompetent, counted apart from the killed ones (docs/development.md,
"Mutation testing")."""

from __future__ import annotations

import importlib.util
import sqlite3

import pytest
from conftest import REPO

TOOL = REPO / "tools" / "mutation" / "python_mutants.py"
if not TOOL.is_file():  # the sdist and CI's copies of tests/ leave the developer tools out
    pytest.skip("tools/mutation is not here (not a source checkout)", allow_module_level=True)
spec = importlib.util.spec_from_file_location("python_mutants", TOOL)
pm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pm)

ORIGINAL = 'def f(a, *, b):\n    return a == "x"\n'


@pytest.mark.parametrize(
    "mutant",
    [
        'def f(a, // , b):\n    return a == "x"\n',  # cosmic-ray's * of a signature turned into //
        'def f(a, ^, b):\n    return a == "x"\n',
        'def f(a, *, b):\n    return a is "x"\n',  # a SyntaxWarning, an error under filterwarnings = error
    ],
)
def test_a_mutant_that_does_not_compile_is_incompetent(mutant):
    assert pm.compile_error(ORIGINAL, "m.py") is None
    assert pm.compile_error(mutant, "m.py").startswith("SyntaxError")


def test_incompetent_mutants_are_counted_apart(tmp_path):
    db = tmp_path / "row.sqlite"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE mutation_specs (job_id, operator_name, start_pos_row)")
        con.execute("CREATE TABLE work_results (job_id, worker_outcome, test_outcome, diff)")
        outcomes = {"a": "KILLED", "b": "SURVIVED", "c": "INCOMPETENT", "d": "KILLED"}
        for job, test in outcomes.items():
            con.execute("INSERT INTO mutation_specs VALUES (?, 'op', 1)", (job,))
            diff = "--- mutation diff ---\n--- a/x.py\n+++ b/x.py\n-    y = 1\n+    y = 2"
            con.execute("INSERT INTO work_results VALUES (?, 'NORMAL', ?, ?)", (job, test, diff))
    judged = {job: outcome for job, outcome, *_ in pm.results_of("x.py", db)}
    assert judged == {"a": "killed", "b": "survived", "c": "incompetent", "d": "killed"}
