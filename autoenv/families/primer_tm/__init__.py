"""Primer design family: melting temperatures and GC content of PCR primers."""

from autoenv.families.primer_tm import generator, recipe

__all__ = ["generator", "recipe"]
