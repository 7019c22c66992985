"""OpenSees drives hybridsim: openseespy's genericClient element against `hybridsim site KIND --openfresco`,
and the protocol's bad inputs, each refused with the site still serving."""

from __future__ import annotations

import re
import subprocess
import sys
import socket
import struct

import numpy as np
import pytest

from tests.interop.helpers import K, LINEAR, PEER, opensees, port_of, relative, site

pytestmark = pytest.mark.timeout(300)


@pytest.mark.parametrize("integrator", ["alpha-os", "newmark"])
def test_generic_client_at_a_linear_site_equals_the_local_elements(tmp_path, integrator):
    """The same openseespy model, with its storeys as zeroLength elements or as a genericClient served by a
    hybridsim linear site: the same response to 1e-12 (AlphaOS/Linear and Newmark/Newton)."""
    with site(tmp_path, "linear", LINEAR, "openfresco") as lab:
        hybrid = opensees({"element": "genericClient", "port": port_of(lab.addresses["openfresco"]),
                           "integrator": integrator})
        text = lab.wait_log(r"closed by the OpenFresco element client .* \(DIE\)")
    local = opensees({"element": "local", "integrator": integrator})
    assert hybrid.shape == local.shape == (300, 2)
    assert np.abs(local).max() > 1e-3  # a response worth comparing (m)
    assert relative(hybrid, local) < 1e-12
    assert "initial and tangent stiffness by a pre-test" in text
    if integrator == "alpha-os":  # 5 pre-test steps, then one step per time step: the repeated trial moved nothing
        assert "proposed 305, executed 305, committed 301" in text


@pytest.mark.parametrize("integrator", ["alpha-os", "newmark"])
def test_generic_client_at_a_bilinear_spring_site_equals_steel01(tmp_path, integrator):
    """The first storey as a `spring` site (bilinear, kinematic hardening) against OpenSees' Steel01 of the same
    law, well past yield: identical under alpha-OS (both use the initial stiffness), within Newton's
    convergence tolerance under Newmark (the site's tangent is its initial stiffness: modified Newton)."""
    spring = {"dofs": ["u2"], "law": "bilinear", "stiffness": 4.0e5, "yield_displacement": 7.5e-4,
              "hardening_ratio": 0.05}
    with site(tmp_path, "spring", spring, "openfresco") as lab:
        hybrid = opensees({"element": "genericClient", "served": "storey1", "integrator": integrator,
                           "port": port_of(lab.addresses["openfresco"])})
    local = opensees({"element": "local", "law": "steel01", "integrator": integrator})
    assert np.abs(local[:, 0]).max() > 5 * 7.5e-4  # yielded
    assert relative(hybrid, local) < (1e-12 if integrator == "alpha-os" else 1e-7)


# -- the protocol by hand ----------------------------------------------------------------------------
def sizes(n: int, data_size: int = 256, ctrl: tuple[int, ...] | None = None) -> bytes:
    return struct.pack("=11i", *(ctrl or (n, n, n, 0, 1)), 0, 0, 0, n, 0, data_size)


def message(values: list[float], data_size: int = 256) -> bytes:
    out = np.zeros(data_size)
    out[:len(values)] = values
    return out.tobytes()


def receive(connection: socket.socket, data_size: int = 256) -> np.ndarray:
    data = b""
    while len(data) < 8 * data_size:
        chunk = connection.recv(8 * data_size - len(data))
        assert chunk, "the site closed the connection"
        data += chunk
    return np.frombuffer(data)


def closed_by_site(connection: socket.socket) -> bool:
    connection.settimeout(10.0)
    try:
        return connection.recv(1) == b""
    except ConnectionResetError:
        return True


def client(lab) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port_of(lab.addresses["openfresco"])), timeout=10.0)


def test_an_element_client_written_from_the_protocol_reads_k_d(tmp_path):
    """Sizes, setTrialResponse twice with one displacement (moves once), getForce, getDaqResponse, the
    matrices, commit, DIE."""
    d = [1.0e-3, 3.0e-3]
    with site(tmp_path, "linear", {**LINEAR, "mass": [[100.0, 0.0], [0.0, 80.0]]}, "openfresco") as lab:
        with client(lab) as c:
            c.sendall(sizes(2))
            for _ in range(2):
                c.sendall(message([3, *d, 0.0, 0.0, 0.0, 0.0, 0.01]))
            c.sendall(message([10]))
            assert receive(c)[:2] == pytest.approx(np.array(K) @ d, rel=1e-15)
            c.sendall(message([6]))  # sizeDaq = [0, 0, 0, 2, 0]
            assert receive(c)[:3].tolist() == [*(np.array(K) @ d), 0.0]
            for code, expected in ((12, K), (13, K), (14, np.zeros((2, 2))), (15, [[100.0, 0.0], [0.0, 80.0]])):
                c.sendall(message([code]))
                assert receive(c)[:4] == pytest.approx(np.array(expected).ravel(order="F"), rel=1e-9, abs=1e-6)
            c.sendall(message([5]) + message([99]))
            assert closed_by_site(c)
        text = lab.wait_log("closed by the OpenFresco element client")
    assert "proposed 6, executed 6, committed 2" in text  # pre-test: 4 trials and the rest committed; one step


def test_a_lab_client_written_from_the_protocol_goes_through_the_handshake(tmp_path):
    """ShadowExpSite's side: endianness int, [1, tag, 2.8] -> [0, tag, 2.8], [2, dataSize] + the two size IDs,
    then 3, 6, 5 and [99, tag] -> [4, tag]."""
    d = [2.0e-3, -1.0e-3]
    with site(tmp_path, "linear", LINEAR, "openfresco") as lab:
        with client(lab) as c:
            c.sendall(struct.pack("=i", 1))
            assert struct.unpack("=i", c.recv(4))[0] == 1
            c.sendall(message([1, 7, 2.8]))
            assert receive(c)[:3].tolist() == [0, 1, 2.8]
            c.sendall(message([2, 32]) + struct.pack("=10i", 2, 0, 0, 0, 1, 2, 0, 0, 2, 0))
            c.sendall(message([3, *d, 0.01], 32) + message([6], 32))
            assert receive(c, 32)[:4].tolist() == [*d, *(np.array(K) @ d)]
            c.sendall(message([5], 32) + message([99, 7], 32))
            assert receive(c, 32)[:2].tolist() == [4, 1]
        assert "closed by the OpenFresco lab client" in lab.wait_log("closed by the OpenFresco lab client")


def test_a_lab_client_s_dataSize_past_an_int_is_refused_in_one_line(tmp_path):
    """A ShadowExpSite setup whose dataSize is 1e300 (struct.error in the site before, its traceback in the log)."""
    with site(tmp_path, "linear", LINEAR, "openfresco") as lab:
        with client(lab) as c:
            c.sendall(struct.pack("=i", 1))
            assert struct.unpack("=i", c.recv(4))[0] == 1
            c.sendall(message([1, 7, 2.8]))
            assert receive(c)[:3].tolist() == [0, 1, 2.8]
            c.sendall(message([2, 1e300]) + struct.pack("=10i", 2, 0, 0, 0, 1, 2, 0, 0, 2, 0))
            assert closed_by_site(c)
        text = lab.wait_log("is not a 32-bit whole number")
    assert "dataSize 1e+300 is not a 32-bit whole number" in text and "Traceback" not in text


BAD = {
    "a wrong action code": (sizes(2) + message([42]), "wrong action code 42"),
    "an action that is not a whole number": (sizes(2) + message([3.5]), "wrong action code 3.5"),
    "sizes that do not fit the module": (sizes(3), "the client commands 3 displacements, the module has 2 DOFs"),
    "force control": (sizes(2, ctrl=(2, 0, 0, 2, 0)), "force control"),
    "a dataSize over the limit": (sizes(2, data_size=2**30), "dataSize 1073741824 is outside"),
    "a dataSize too small for the matrices": (sizes(2, data_size=3), "cannot hold the vectors"),
    "a displacement that is not finite": (sizes(2) + message([3, np.nan, 0.0]), "non-finite"),
    "a client gone mid-message": (sizes(2) + message([3, 1e-3, 0.0])[:100], "in the middle of a message"),
    "a client gone mid-sizes": (sizes(2)[:20], "in the middle of the sizes message"),
}


def test_bad_input_is_refused_and_the_site_keeps_serving(tmp_path):
    """Each bad input is refused (logged, the connection closed) and the next client is served."""
    with site(tmp_path, "linear", LINEAR, "openfresco") as lab:
        for what, (data, logged) in BAD.items():
            with client(lab) as c:
                c.sendall(data)
                if "gone" in what:
                    c.shutdown(socket.SHUT_WR)
                assert closed_by_site(c), what
            assert logged in lab.wait_log(re.escape(logged)), what
        with client(lab) as c:  # still serving
            c.sendall(sizes(2) + message([3, 1e-3, 0.0]) + message([10]))
            assert receive(c)[:2] == pytest.approx(np.array(K) @ [1e-3, 0.0], rel=1e-15)
        assert lab.process.poll() is None


def test_a_limit_refusal_ends_the_session_with_its_reason_in_the_log(tmp_path):
    """The site's limits apply on this channel as on gRPC: the step is refused before anything moves, the
    session ends (the protocol cannot carry a reason) and the log says why."""
    config = {**LINEAR, "limits": {"displacement": 2e-3}}
    with site(tmp_path, "linear", config, "openfresco") as lab:
        with client(lab) as c:
            c.sendall(sizes(2) + message([3, 1e-3, 0.0]) + message([5]) + message([3, 5e-3, 0.0]))
            assert closed_by_site(c)
        text = lab.wait_log("ended after a refusal")
    assert "displacement limit on DOF 'u2'" in text


@pytest.mark.parametrize("options, config, message", [
    (["--openfresco", "0.0.0.0:0"], LINEAR, "--openfresco 0.0.0.0:0: this protocol has no authentication"),
    (["--simcor", "127.0.0.1:0"], LINEAR, "--simcor needs a [simcor] table"),
    (["--simcor", "127.0.0.1:0"], {**LINEAR, "simcor": {"control_points": {"MDL-00-01": {"x": "u2"}}}},
     "DOF(s) u3 belong to no control point"),
    (["--openfresco", "127.0.0.1:0"], {**LINEAR, "openfresco": {"dt": -1}}, "openfresco.dt must be a positive"),
])
def test_bad_protocol_options_are_one_line_naming_the_fix(tmp_path, options, config, message):
    import json
    import subprocess
    import sys

    path = tmp_path / "site.json"
    path.write_text(json.dumps(config))
    done = subprocess.run([sys.executable, "-m", "hybridsim", "site", "linear", "--config", str(path), "--listen",
                           "127.0.0.1:0", "--link-listen", "none", *options], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert message in done.stderr.strip().splitlines()[-1]


def test_opensees_drives_an_experimental_site_with_rls_ac_to_the_end(tmp_path):
    """An openseespy model (the maRTHS numerical frame condensed to the three interface DOFs) with a
    genericClient at the benchmark's experimental site (virtual plant, RLS-AC, one control sample per step)
    runs the first 4 s of El Centro's motion at 40 % to the end; the site's record gives the tracking error."""
    import json

    import h5py

    from hybridsim.coordinator.motion import read_motion
    from hybridsim.coordinator.problems.marths import parts
    from hybridsim.coordinator.problems.marths import structure as ms

    frame = ms.numerical_substructure()
    interface = list(ms.FEEDBACK_DOFS)
    others = [i for i in range(frame.stiffness.shape[0]) if i not in interface]
    k = frame.stiffness
    t = np.vstack((np.eye(3), -np.linalg.solve(k[np.ix_(others, others)], k[np.ix_(others, interface)])))
    order = interface + others
    k_c = t.T @ k[np.ix_(order, order)] @ t
    m_c = t.T @ frame.mass[np.ix_(order, order)] @ t
    load = t.T @ frame.load_mass[order]
    steps = 4096
    record = read_motion(parts.data.DATA_DIR / "ground_motion_elcentro.csv").scaled(0.4).resampled(parts.DT, None)
    start = int(np.nonzero(record.acceleration)[0][0])  # the record begins with about 5 s of rest
    ground = np.concatenate(([0.0], record.acceleration[start:start + steps]))
    plant = parts.plant_config("nominal", None, False, 0)  # no sensor noise: the strokes here are small
    config = {**parts.site_config("rls", backend={"plant": plant}, record="site.h5"), "openfresco": {"dt": parts.DT}}
    with site(tmp_path, "experimental", config, "openfresco") as lab:
        args = {"element": "matrices", "port": port_of(lab.addresses["openfresco"]), "dt": parts.DT,
                "stiffness": ((k_c + k_c.T) / 2).tolist(), "mass": m_c.tolist(), "load": load.tolist(),
                "ground": ground.tolist()}
        (tmp_path / "model.json").write_text(json.dumps(args))
        done = subprocess.run([sys.executable, str(PEER), f"@{tmp_path / 'model.json'}"], capture_output=True,
                              text=True, timeout=240)
        assert done.returncode == 0, done.stderr
        history = np.array(json.loads(done.stdout.strip().splitlines()[-1]))
        text = lab.wait_log("closed by the OpenFresco element client")
    assert history.shape == (steps, 3) and np.isfinite(history).all()
    with h5py.File(tmp_path / "site.h5") as f:
        target, measured = f["target_strokes"][1:steps], f["measured_strokes"][2:steps + 1]
    error = 100 * np.std(target - measured, axis=0, ddof=1) / np.std(target, axis=0, ddof=1)
    print(f"tracking NRMS over {steps} samples: {error[0]:.2f} % / {error[1]:.2f} %")
    assert np.all(error < 20.0)  # measured 4.6 % and 3.3 %
    assert f"committed {steps + 1}," in text  # the rest state, then one step per sample
