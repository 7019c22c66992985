"""OpenSees model files of the reference problems (loaded by path by the opensees module)."""
