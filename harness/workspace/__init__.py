"""The workspace: the jail every path goes through, the filesystem operations the page
asks for (``h.fs``), the zip archive, the change journal, checkpoints (undo) and the view
the sandbox's copy of ``/work`` syncs through."""
