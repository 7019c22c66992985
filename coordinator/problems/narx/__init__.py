"""The NARX compensator study on the maRTHS benchmark (docs/narx.md): ``study`` runs it, ``report``
writes its tables, parameter histories and plots."""
