"""The stages of a test program (``[[stages]]``): static, dynamic, quasi-static, free vibration.

``STAGES`` is the registry: one line per kind, imported when used.  A new kind is one file with a :class:`Stage`
subclass (``CONFIG``, ``build``, ``enter``, ``step``; see ``base``) and one line here.  ``CONFIG`` declares the
whole ``[[stages]]`` entry: ``kind`` chooses the stage, whose ``CONFIG`` takes the rest.
"""

from __future__ import annotations

from hybridsim.modules.config_schema import Key, Schema, Text, Variants

STAGES: dict[str, str] = {
    "static": "hybridsim.coordinator.stages.static:StaticStage",
    "dynamic": "hybridsim.coordinator.stages.dynamic:DynamicStage",
    "quasi-static": "hybridsim.coordinator.stages.quasi_static:QuasiStaticStage",
    "free-vibration": "hybridsim.coordinator.stages.dynamic:FreeVibrationStage",
}

CONFIG = Schema("[[stages]]", "One stage of the test program, in order; the forces of a static stage and the last "
                "value of a quasi-static force history are held in every later stage (gravity stays on). Absent: one dynamic stage (the excitation).", {
                    "name": Key(Text(), "the stage's name in the results and messages (default: its kind and "
                                "number)"),
                }, variants=Variants("kind", STAGES, doc="the stage"))
