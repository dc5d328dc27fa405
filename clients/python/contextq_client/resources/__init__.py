"""The SDK's resource namespaces (synchronous), one module per namespace of the client
(`client.files` → `files.py`, …), each a `Resource` over the `SyncTransport`.

`contextq_client.async_resources` is generated from this package by
`scripts/gen_async_sdk.py` (`./scripts/lint` checks it is current): edit here. Conventions
the generator relies on: every I/O call is `self._t.request(…)` or a call of another
method of the same resource (`self.list(…)`), sleeping is `time.sleep`, and a class is
`Name(Resource[SyncTransport])`.
"""

from contextq_client.resources.context import ContextResource
from contextq_client.resources.conversations import Conversations
from contextq_client.resources.files import Files
from contextq_client.resources.jobs import Jobs
from contextq_client.resources.memory import Memory
from contextq_client.resources.messages import Messages
from contextq_client.resources.projects import Projects
from contextq_client.resources.settings import OwnerSettingsResource
from contextq_client.resources.tools import Tools
from contextq_client.resources.webhooks import Webhooks
from contextq_client.resources.workspace import Workspace

__all__ = [
    "ContextResource",
    "Conversations",
    "Files",
    "Jobs",
    "Memory",
    "Messages",
    "OwnerSettingsResource",
    "Projects",
    "Tools",
    "Webhooks",
    "Workspace",
]
