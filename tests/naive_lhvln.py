"""A plain-Python twin of LH-VLN's evaluator, written from its logic (not copied):
``utils/metrics.py`` of HCPLab-SYSU/LH-VLN at 3492080, class ``NavigationMetrics``: ``add_sample``
keeps every argument in a list; ``success_rate``, ``oracle_success_rate``, ``spl``,
``navigation_error``, ``independent_success_rate``, ``conditional_success_rate``,
``conditional_path_length`` and ``TAR`` compute the figures from the lists; ``compute`` returns
them by name. Kept in the evaluator's shape (loops over lists, its guards), so that a difference
from navdtw's per-episode-then-aggregated computation shows."""

from __future__ import annotations


class Evaluator:
    def __init__(self):
        self.rows = []

    def add_sample(self, success, gt_step, path_step, oracle_success, navigation_error, subtask_successes,
                   subtask_path_step, gt_length, error_length):  # fmt: skip
        self.rows.append(
            {
                "success": success,
                "gt_step": gt_step,
                "path_step": path_step,
                "oracle_success": oracle_success,
                "navigation_error": navigation_error,
                "subtask_successes": subtask_successes,
                "subtask_path_step": subtask_path_step,
                "gt_length": gt_length,
                "error_length": error_length,
            }
        )

    def _mean(self, key):
        values = [r[key] for r in self.rows]
        return sum(values) / len(values) if values else 0

    def spl(self):
        # each episode: success * gt / max(gt, path) when the path has steps, else 0
        total = 0
        for r in self.rows:
            s, gp, p = r["success"], r["gt_step"], r["path_step"]
            total += s * (gp / max(gp, p)) if p > 0 else 0
        return total / len(self.rows) if self.rows else 0

    def isr(self):
        # every subtask of every episode pooled: successes / subtasks
        n = sum(len(r["subtask_successes"]) for r in self.rows)
        ok = sum(sum(r["subtask_successes"]) for r in self.rows)
        return ok / n if n > 0 else 0

    def csr(self):
        if not self.rows:
            return 0
        total = 0
        for r in self.rows:
            subs = r["subtask_successes"]
            n = len(subs)
            if n == 0:  # an episode without subtasks adds nothing but counts in the mean
                continue
            prev = subs[0]
            acc = prev * n
            if n == 1:
                total += acc
                continue
            for s in subs[1:]:
                acc += s * (1 + (n - 1) * prev)
                prev = s
            total += acc / n**2
        return total / len(self.rows)

    def cgt(self):
        if not self.rows:
            return 0
        total = 0
        for r in self.rows:
            subs, steps = r["subtask_successes"], r["subtask_path_step"]
            n = len(subs)
            if n == 0:
                continue
            whole = sum(steps)  # ZeroDivisionError when every subtask has 0 steps, as the evaluator
            w = [x / whole for x in steps]
            prev = subs[0]
            acc = prev * n * w[0]
            if n == 1:
                total += acc
                continue
            for s, wj in zip(subs[1:], w[1:]):
                acc += s * (1 + (n - 1) * prev) * wj
                prev = s
            total += acc / n
        return total / len(self.rows)

    def tar(self):
        values = []
        for r in self.rows:
            for j in range(len(r["gt_length"])):
                e, g = r["error_length"][j], r["gt_length"][j]
                if e == 0 and g == 0:
                    values.append(1.0)
                elif g == 0:
                    values.append(0.0)
                else:
                    den = max(e, g)
                    values.append(1 - max(e - 1, 0) / den if den > 0 else 1.0)
        return sum(values) / len(values) if values else 0

    def compute(self):
        return {
            "success_rate": self._mean("success"),
            "oracle_success_rate": self._mean("oracle_success"),
            "spl": self.spl(),
            "navigation_error": self._mean("navigation_error"),
            "independent_success_rate": self.isr(),
            "conditional_success_rate": self.csr(),
            "conditional_path_length": self.cgt(),
            "tar": self.tar(),
        }
