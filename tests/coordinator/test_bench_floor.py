"""`hybridsim bench`'s step_floors: each cross-process step beside its floor (long: it starts an OpenSees daemon,
two sites and three openseespy processes; `python benchmarks/step_floors.py` prints the figures)."""

from __future__ import annotations

import pytest

from hybridsim.coordinator.bench_floor import REPLIES, floor_figures, format_floors


@pytest.mark.long
def test_every_cross_process_step_is_measured_beside_its_floor():
    figures = floor_figures(calls=100, steps=100)
    print("\n".join(format_floors(figures)))
    site, client = figures["opensees_site"], figures["generic_client"]
    assert site["floor_us"] == site["in_process_us"] + site["tcp_echo_us"]
    assert client["protocol_floor_us"] == client["local_us"] + REPLIES * client["tcp_echo_us"]
    # a step that crosses a process costs at least one round trip more than the same work in process
    assert site["link_us"] > site["in_process_us"] and client["linear_site_us"] > client["local_us"]
    # the protocol alone (six requests, three answered, no work at the far end) costs more than one echo
    assert client["linear_zero_work_us"] > client["floor_us"]
    loop = figures["marths_loop"]
    assert loop["chain_floor_us"] == loop["in_process_us"] + loop["relayed_echo_us"]
