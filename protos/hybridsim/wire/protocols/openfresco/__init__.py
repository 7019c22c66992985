"""OpenSees/OpenFresco's SimApp TCP protocol: ``codec`` (the bytes), ``server`` (a site serves its module to
genericClient elements and ShadowExpSites), ``client`` (the ``openfresco`` module kind: the coordinator drives an
OpenSees ``adapter`` element, an OpenFresco element or site server, or an OpenFresco lab server).
See docs/interop.md."""
