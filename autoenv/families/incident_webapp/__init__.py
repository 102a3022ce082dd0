"""Family ``incident-webapp``: resolve an incident through a small web app's pages and form."""

from __future__ import annotations

from autoenv.families.incident_webapp import generator
from autoenv.families.incident_webapp.recipe import IncidentWebappRecipe
from autoenv.families.office import folder_family

FAMILY = folder_family(
    generator.NAME,
    "resolve an incident through a web app: symptom page, runbook library, resolution form",
    ("web", "browser", "form", "http", "curl", "web app", "incident", "runbook", "page"),
    generator.generate,
    IncidentWebappRecipe(),
)
