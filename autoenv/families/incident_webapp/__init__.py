"""Family ``incident-webapp``: resolve an incident through a small web app's pages and form."""

from autoenv.families.incident_webapp import generator, recipe

__all__ = ["generator", "recipe"]
