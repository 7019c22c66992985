"""The wire: the module contract and the code that carries it, imported by the coordinator and the
modules alike and importing neither.

- ``contract``: the module interface and its values (Command, StepResult, Description, Session,
  the errors), in SI units;
- ``codec``: protobuf messages of ``hybridsim.v1`` <-> those values;
- ``server``: hosts any module over gRPC (and its step link, ``link``);
- ``remote``: the client, a module at another site seen through the same interface;
- ``security`` and ``credentials``: tokens and mutual TLS, the site's and the client's side;
- ``daemons``: site daemons started on this machine; ``latency``: emulated network delay.
"""
