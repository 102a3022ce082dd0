"""Primer design family: melting temperatures and GC content of PCR primers."""

from __future__ import annotations

from autoenv.families.base import Family
from autoenv.families.primer_tm import generator
from autoenv.families.primer_tm.recipe import PrimerTmRecipe

FAMILY = Family(
    "primer-tm",
    "melting temperatures and GC content of PCR primers, with or without Python",
    ("primer", "melting", "tm", "pcr", "dna", "bioinformatics", "gc content", "awk", "no python"),
    generator.generate,
    PrimerTmRecipe(),
)
