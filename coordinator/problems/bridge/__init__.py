"""`hybridsim study bridge`: a three-pier bridge in three modules (a lab, OpenSees in process, OpenSees behind
an adapter element) against one OpenSees model of the whole bridge (docs/bridge.md)."""
