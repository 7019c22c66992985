"""The rehearsal of an experiment before its specimen moves (issue 36 item 4): stability margins by bisection."""
