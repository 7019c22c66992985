"""`hybridsim study ssi`: a soil block and a frame in two programs coupled by the coordinator (docs/ssi.md)."""
