"""The shipped example experiments (``hybridsim examples`` lists them, ``--copy DIR`` copies them).

Their data files are named as ``hybridsim:NAME`` (:mod:`hybridsim.shipped`), so a copy runs from any folder.
"""
