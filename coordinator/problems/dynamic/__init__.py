"""`hybridsim study dynamic`: the coupling of dynamic modules (docs/dynamic_modules.md) on a linear chain."""
