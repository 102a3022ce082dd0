"""Task content, kept apart from the framework: one folder per family (generator, real task files, solver recipe).

``autoenv.families.registry`` lists them; :class:`~autoenv.families.base.Family`
is the interface every family implements. See ARCHITECTURE.md.
"""
