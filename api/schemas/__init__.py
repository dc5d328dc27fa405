"""Public models of the API, one module per area (`api.schemas.history`, …).

MERGE NOTE (temporary): on this branch `api/schemas.py` still holds the files models
and this package shadows it; the lines below re-export them so `api/routes/files.py`
keeps working. Branch svc-files moves them to `api/schemas/files.py` and makes this
file empty: when merging, take its (empty) version.
"""

import importlib.util as _util
import sys as _sys
from pathlib import Path as _Path

_spec = _util.spec_from_file_location(
    "api._files_schemas", _Path(__file__).resolve().parent.parent / "schemas.py"
)
assert _spec is not None and _spec.loader is not None
_files = _util.module_from_spec(_spec)
_sys.modules[_spec.name] = _files  # pydantic resolves the models' annotations through it
_spec.loader.exec_module(_files)
FileList = _files.FileList
FilePublic = _files.FilePublic
FileStatusName = _files.FileStatusName
