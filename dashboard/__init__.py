"""The Panel app of noiselab (param models -> Viewer views -> one app factory).

Importing it does nothing else: the commands' start-up steps (quiet Ctrl+C, the server's allocator) are
in ``dashboard.launch``, called by each command.
"""
