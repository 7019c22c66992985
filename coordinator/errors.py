"""Errors the CLI turns into one-line messages."""


class UsageError(Exception):
    """Bad input from the user (experiment file, option, path): exit code 2."""


class RunStopped(Exception):
    """A run stopped before its end (a module refused or failed a step): exit code 1.

    The results written before the stop stay on disk.
    """
