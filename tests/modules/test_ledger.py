"""A repeated proposal is a retry only when it repeats the whole command (issue 15 item 11)."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.modules.linear import LinearModule
from hybridsim.wire.contract import Command, Dof, Session, StepRefused


@pytest.mark.parametrize("other", [
    Command(0.02, np.array([0.001])),                                   # another time
    Command(0.01, np.array([0.001]), velocity=np.array([0.5])),         # a velocity
    Command(0.01, np.array([0.002])),                                   # another displacement
])
def test_a_different_command_for_a_proposed_step_is_refused_and_the_same_one_is_a_retry(other):
    module = LinearModule([Dof("x")], [[1000.0]])
    module.open(Session(0.01, ("x",)))
    command = Command(0.01, np.array([0.001]))
    module.propose(1, command)
    module.propose(1, Command(0.01, np.array([0.001])))
    assert module.stats["retried"] == 1
    with pytest.raises(StepRefused, match="already proposed with a different command"):
        module.propose(1, other)
    assert module.execute(1).force == pytest.approx([1.0])  # the first command stands
