"""Tangent stiffness updating from measured increments, for the iterated schemes (``tangent = ...``).

The condensed tangent K starts every step at the pre-test stiffness K_I (as OpenSees' Broyden and BFGS
algorithms form their tangent at a step's first iteration; a tangent carried over from a yielding step
is too soft for the elastic unloading that follows it, and modified Newton on a too soft tangent
overshoots); after every module evaluation the increment from the previous evaluation (dd, m; dr, N:
the commanded displacement and the measured restoring force, the first from the committed state)
updates it:

- ``initial``: never (modified Newton on K_I);
- ``broyden``: Broyden's rank-one secant update (Broyden 1965; Dennis & Schnabel 1983, chapter 8),
  K <- K + (dr - K dd) dd^T / (dd^T dd);
- ``bfgs``: the BFGS rank-two update (Dennis & Schnabel 1983, chapter 9),
  K <- K + dr dr^T / (dr^T dd) - K dd dd^T K / (dd^T K dd), symmetric and positive definite as long as
  dr^T dd > 0 (the curvature condition).

Safeguards (as the quasi-Newton literature and hybrid tests use them): an increment whose largest
component is below ``min_increment`` (m or rad; an actuator's resolution) is skipped, since a secant
over it measures noise; BFGS skips an increment that breaks the curvature condition (dr^T dd <= 0, a
softening or unloading branch); an update whose symmetric part would not be positive definite is
skipped (an unstable tangent in the effective matrix).  Updates and skips are counted, per step and in
total (the totals go into checkpoints).
"""

from __future__ import annotations

import numpy as np

from hybridsim.modules.config_schema import Key, Number, Text

METHODS = ("initial", "broyden", "bfgs")
KEYS = {
    "tangent": Key(Text(METHODS), "the condensed tangent: the pre-test stiffness throughout (initial), or updated "
                   "from measured increments (broyden, bfgs)", default="initial"),
    "tangent_min_increment": Key(Number(minimum=0.0), "increments below it (largest component, m or rad) do not "
                                 "update the tangent", default=1e-9)}
"""the options of a scheme that updates its tangent, declared once"""


class Tangent:
    """The condensed tangent stiffness K (N/m) and its updates; ``changed`` says K moved since last read."""

    def __init__(self, initial: np.ndarray, method: str, min_increment: float) -> None:
        if method not in METHODS:
            raise ValueError(f"tangent must be one of {', '.join(METHODS)}, not {method!r}")
        self.method = method
        self.initial = np.array(initial, float)
        self.matrix = self.initial.copy()
        self.min_increment = float(min_increment)
        self.updates = self.skipped = 0
        """over the run"""
        self.step_updates = self.step_skipped = 0
        """in the current step (reset by :meth:`begin`)"""
        self._last_d, self._last_r = np.zeros(self.matrix.shape[0]), np.zeros(self.matrix.shape[0])
        """the last evaluation (or the committed state): where the next measured increment starts"""

    def begin(self, displacement: np.ndarray, restoring_force: np.ndarray) -> bool:
        """A step starts from the committed displacement (m) and restoring force (N), K back at K_I; True when
        K changed."""
        changed = self.step_updates > 0
        if changed:
            self.matrix[...] = self.initial
        self._last_d[...] = displacement
        self._last_r[...] = restoring_force
        self.step_updates = self.step_skipped = 0
        return changed

    def observe(self, displacement: np.ndarray, restoring_force: np.ndarray) -> bool:
        """The modules answered ``restoring_force`` at ``displacement``: update from the increment since the last
        evaluation; True when K changed."""
        changed = self.update(displacement - self._last_d, restoring_force - self._last_r)
        self._last_d[...] = displacement
        self._last_r[...] = restoring_force
        return changed

    def update(self, dd: np.ndarray, dr: np.ndarray) -> bool:
        """Take the increment (dd, dr); True when K changed."""
        if self.method == "initial":
            return False
        if not np.max(np.abs(dd), initial=0.0) > self.min_increment:
            return self._skip()
        k = self.matrix
        if self.method == "broyden":
            candidate = k + np.outer(dr - k @ dd, dd) / float(dd @ dd)
        else:
            curvature, kd = float(dr @ dd), k @ dd
            if curvature <= 0.0 or float(dd @ kd) <= 0.0:
                return self._skip()
            candidate = k + np.outer(dr, dr) / curvature - np.outer(kd, kd) / float(dd @ kd)
        try:
            np.linalg.cholesky(0.5 * (candidate + candidate.T))
        except np.linalg.LinAlgError:
            return self._skip()
        self.matrix = candidate
        self.updates += 1
        self.step_updates += 1
        return True

    def _skip(self) -> bool:
        self.skipped += 1
        self.step_skipped += 1
        return False

    def state(self) -> dict[str, np.ndarray]:
        return {"tangent_counts": np.array([self.updates, self.skipped])}

    def set_state(self, state: dict[str, np.ndarray]) -> None:
        """Counts of a checkpoint (a step begins at K_I, so K needs no keeping)."""
        self.updates, self.skipped = (int(x) for x in state["tangent_counts"])
        self.matrix[...] = self.initial
        self.step_updates = 0
