"""Where the DOF count breaks a run: a real write of rows of 50k ... 500k DOFs through the results writer, and the
memory a run of that size keeps for its rows.

    python benchmarks/writer_dofs.py [--dofs 50000 100000 200000 500000] [--rows 256] [--json]

The measurement is :func:`hybridsim.coordinator.recorder.dof_cost.write_figures` (its docstring says how); the cap
it sets is ``MAX_DOFS`` in :mod:`hybridsim.coordinator.config_text`.
"""

from __future__ import annotations

import argparse
import json

from hybridsim.coordinator.recorder.dof_cost import write_figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dofs", type=int, nargs="+", default=[50_000, 100_000, 200_000, 500_000])
    parser.add_argument("--rows", type=int, default=256)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for ndof in args.dofs:
        figures = write_figures(ndof, args.rows)
        if args.json:
            print(json.dumps(figures), flush=True)
        elif "write_s_per_row" in figures:
            print(f"{ndof:>7} DOFs: created in {figures['create_s']:.2f} s, {1e3 * figures['write_s_per_row']:.1f} ms "
                  f"per row written, writer peak {figures['writer_peak_mib']:.0f} MiB, file {figures['file_mib']:.0f} "
                  f"MiB, failure {figures['failure']}; a run keeps {figures['kept_gib']:.1f} GiB of rows "
                  f"(load {figures['load_average']:.2f})", flush=True)
        else:
            print(f"{ndof:>7} DOFs: {figures['failure']}; a run keeps {figures['kept_gib']:.1f} GiB of rows "
                  f"(load {figures['load_average']:.2f})", flush=True)


if __name__ == "__main__":
    main()
