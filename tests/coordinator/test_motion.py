"""Ground motions: CSV and PEER .AT2 readers, resampling, scaling."""

from __future__ import annotations

import numpy as np
import pytest

from hybridsim.coordinator.motion import STANDARD_GRAVITY, GroundMotion, MotionError, read_at2, read_csv, read_motion
from tests.conftest import MARTHS_DATA


def test_el_centro_csv_matches_its_documented_header_figures():
    motion = read_csv(MARTHS_DATA / "ground_motion_elcentro.csv")
    # data README: 2060 rows, step 0.02 s, PGA 3.134930197183131 m/s^2 at file time 7.02 s
    assert motion.acceleration.size == 2060
    assert motion.dt == pytest.approx(0.02)
    assert motion.pga == pytest.approx(3.134930197183131, rel=1e-12)
    assert motion.time[np.argmax(np.abs(motion.acceleration))] == pytest.approx(7.02)


def test_resampled_el_centro_matches_the_benchmark_interpolated_samples():
    # maRTHS SPEC 17.2: El Centro x 0.4 at 1024 Hz, ticks 5120..5122
    motion = read_csv(MARTHS_DATA / "ground_motion_elcentro.csv").scaled(0.4).resampled(1 / 1024)
    np.testing.assert_allclose(motion.acceleration[5120:5123], [0.02045507, 0.01994613, 0.01943719], rtol=2e-7)
    assert motion.acceleration.size == 42169  # N = floor(t_end fs) + 1


def test_at2_reader_converts_g_to_si(tmp_path):
    path = tmp_path / "RSN1.AT2"
    path.write_text("PEER NGA STRONG MOTION DATABASE RECORD\nTest record\n"
                    "ACCELERATION TIME SERIES IN UNITS OF G\nNPTS=    5, DT=   .0100 SEC\n"
                    "  .1000E+00 -.2000E+00  .0000E+00\n  .5000E-01  .0000E+00\n")
    motion = read_motion(path)
    assert motion.dt == pytest.approx(0.01)
    np.testing.assert_allclose(motion.acceleration, np.array([0.1, -0.2, 0.0, 0.05, 0.0]) * STANDARD_GRAVITY)


def test_at2_with_wrong_point_count_is_refused(tmp_path):
    path = tmp_path / "bad.AT2"
    path.write_text("a\nb\nc\nNPTS=    4, DT=   .0100 SEC\n 1 2 3\n")
    with pytest.raises(MotionError, match="NPTS=4 but the file holds 3"):
        read_at2(path)


def test_scaling_to_pga_and_refining_is_exact_for_the_piecewise_linear_record():
    motion = GroundMotion(0.1, np.array([0.0, 1.0, -2.0, 0.5]))
    scaled = motion.scaled_to_pga(4.0)
    assert scaled.pga == pytest.approx(4.0)
    fine = scaled.resampled(0.05)
    np.testing.assert_allclose(fine.acceleration, [0, 1, 2, -1, -4, -1.5, 1.0])


def test_a_step_coarser_than_the_record_is_refused():
    motion = GroundMotion(0.01, np.zeros(10))
    with pytest.raises(MotionError, match="larger than the record's step"):
        motion.resampled(0.02)


def test_csv_with_uneven_time_is_refused(tmp_path):
    path = tmp_path / "uneven.csv"
    path.write_text("time,acc\n0,0\n0.01,1\n0.03,0\n")
    with pytest.raises(MotionError, match="not uniformly spaced"):
        read_csv(path)


def test_a_bad_line_is_named_by_its_number_without_quoting_the_file(tmp_path):
    path = tmp_path / "motion.csv"
    path.write_text("time_s,accel\n0.0,0.0\n0.01,hunter2-secret\n")
    with pytest.raises(MotionError) as info:
        read_csv(path)
    assert str(info.value) == f"{path}: line 3 is not two numbers (time in s, acceleration)"
    at2 = tmp_path / "motion.AT2"
    at2.write_text("h\nh\nh\nNPTS= 2, DT= 0.01 SEC\n0.1 hunter2-secret\n")
    with pytest.raises(MotionError, match=r"line 5 holds a value that is not a number$") as info:
        read_at2(at2)
    assert "hunter2" not in str(info.value)


def test_a_ground_motion_file_beyond_the_cap_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "huge.csv"
    with open(path, "wb") as f:
        f.truncate(47 * 2**20)  # the 47 MB record that took 955 MB to read
    with pytest.raises(MotionError, match=r"huge.csv is 47 MiB, more than the 32 MiB a ground motion may have"):
        read_motion(path)
