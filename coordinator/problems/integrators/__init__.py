"""`hybridsim study integrators`: the accuracy and stability of the coordinator's schemes (docs/integrators.md)."""
