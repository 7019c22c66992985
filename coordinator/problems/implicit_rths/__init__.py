"""The implicit RTHS study (Wang, Liu, Wu, Xu 2015): its methods, cases, metrics and report.

``methods`` holds the three implicit RTHS methods (Shing, EFCM, nearly-complete delay compensation)
with their own driver and virtual site; they solve the implicit Newmark equation while the
actuator moves and are not coordinator integrators.  ``cases`` builds the specification's cases
and method variants, ``metrics`` computes its errors and timings, ``report`` its tables and plots.
"""
