"""UI-SIMCOR's LabView1/LabView2 protocols: ``codec`` (the lines), ``server`` (a site serves its module to
UI-SIMCOR), ``client`` (the ``simcor`` module kind: the coordinator drives a LabVIEW lab plugin, an LBCB plugin
or a hybridsim site).  See docs/interop.md."""
