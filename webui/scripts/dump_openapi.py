"""Print the catalog's OpenAPI document (JSON) as the running service would serve it.

Run by `npm run api:generate` / `api:check` (scripts/api.mjs) with the repository's Python.
No database is opened: the app is built on an in-memory SQLite URL and only its schema is read.
"""

import json
import sys

from ndnsci_catalog.config import Settings
from ndnsci_catalog.main import create_app

document = create_app(Settings(db="sqlite://")).openapi()
json.dump(document, sys.stdout, indent=2, sort_keys=False, ensure_ascii=False)
sys.stdout.write("\n")
