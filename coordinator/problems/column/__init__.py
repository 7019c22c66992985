"""`hybridsim study column`: a cantilever column with gravity under two horizontal components."""
