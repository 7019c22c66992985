"""The wire: the module contract and the code that carries it, imported by the coordinator and the
modules alike and importing neither (docs/architecture.md, docs/wire.md).

- ``contract``: the module interface and its values (Command, StepResult, Description, Session,
  Record, the errors), in SI units; ``codec``: ``hybridsim.v1`` messages <-> those values;
- ``server``: hosts any module over gRPC, its ``ModuleServicer`` the one step logic every channel and
  lab protocol reaches; ``link``: the step link beside it;
- ``channels``: how a step travels (unary, stream, link), chosen by ``remote.RemoteModule``, which keeps
  the control plane and the retry rule;
- ``starters``: where a module runs (in process, local daemon, address), for the coordinator and an
  experimental site alike; ``daemons``: site daemons started on this machine;
- ``security`` and ``credentials``: tokens and mutual TLS, the site's side and the client's;
- ``protocols``, ``openfresco``, ``simcor``: the labs' own protocols (docs/interop.md);
- ``network``: network emulation (latency, jitter, loss as TCP resends) by a proxy in front of a site.
"""
