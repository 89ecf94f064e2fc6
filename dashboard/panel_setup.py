"""``panel serve dashboard/app.py --setup dashboard/panel_setup.py``: the lab's server hardening
(``dashboard.hardening``: only the lab's routes, only known host names, no request ends the process)
under Panel's own server command. Panel runs this file before its server exists (one process) or in each
web process once it serves (``--num-procs``); the hardening is applied then, or on the loop's first turn,
before any request is read."""

from tornado.ioloop import IOLoop

from dashboard.hardening import harden_running_servers
from dashboard.server_logging import configure_logging

configure_logging()
if not harden_running_servers():
    IOLoop.current().add_callback(harden_running_servers)
