"""Campaigns of any experiment (issue 36): the runs a campaign file names, each an ordinary run."""
