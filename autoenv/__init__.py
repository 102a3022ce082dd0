"""autoenv: generate, validate and calibrate Harbor training environments."""

import os as _os

# Harbor's LLM layer (litellm) fetches a model price map over the network on
# import; autoenv must run offline, so use the copy litellm ships.
_os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

__version__ = "0.1.0"
