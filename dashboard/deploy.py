"""Serving a class behind nginx: the site configuration and the backends' service unit.

``python -m dashboard.deploy nginx --server-name lab.example.edu --backend 127.0.0.1:5101 --backend
127.0.0.1:5102 --certificate /etc/ssl/lab.pem --key /etc/ssl/lab.key > /etc/nginx/sites-available/noiselab``
writes an nginx site for backends started as ``python -m dashboard.serve --port 5101 ...`` (one per port;
``python -m dashboard.deploy systemd ...`` writes their unit). What the site does:

* **sticky sessions**: a browser's page and its websocket must reach the same backend (a session lives
  in the process that built the page; a websocket reaching another one builds it a second time). The
  first response sets a cookie holding a random key (nginx's ``$request_id``); requests are routed by a
  consistent hash of it, so a browser keeps its backend, and different browsers spread over them;
* **a lost backend**: a request it cannot answer goes to the next one (``proxy_next_upstream``), and a
  failed backend is left out for ``fail_timeout``; a restarted one takes new pages again after it;
* websocket upgrade, TLS (1.2 and 1.3), HTTP redirected to HTTPS, the host name, long websocket timeouts,
  and the upload limit (a file travels inside one websocket message).

See docs/deployment.md for the whole procedure.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence

from noisecore import __version__

from .uploads import WEBSOCKET_MAX_MESSAGE_BYTES

__all__ = ["backend_command", "main", "nginx_site", "systemd_unit"]

_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")
_BACKEND = re.compile(r"^(?P<host>[A-Za-z0-9.\-]+|\[[0-9A-Fa-f:]+\]):(?P<port>[0-9]{1,5})$")
_PATH = re.compile(r"^/[^\s;{}'\"$\\]*$")


def _server_name(value: str) -> str:
    if not isinstance(value, str) or not _NAME.match(value):
        raise ValueError(f"server_name must be a host name (letters, digits, '-' and '.'), got {value!r}")
    return value.lower()


def _backends(values: Sequence[str]) -> list[str]:
    if isinstance(values, str) or not values:
        raise ValueError("backends must be a non-empty list of host:port, e.g. ['127.0.0.1:5101']")
    out = []
    for value in values:
        match = _BACKEND.match(value) if isinstance(value, str) else None
        if match is None or not 1 <= int(match["port"]) <= 65535:
            raise ValueError(f"backends must be host:port with a port in [1, 65535], got {value!r}")
        out.append(value)
    if len(set(out)) != len(out):
        raise ValueError(f"backends must be distinct, got {values!r}")
    return out


def _path(name: str, value: str) -> str:
    if not isinstance(value, str) or not _PATH.match(value):
        raise ValueError(f"{name} must be an absolute path without spaces, quotes, ';', braces or '$', got {value!r}")
    return value


def _port(name: str, value: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 65535:
        raise ValueError(f"{name} must be a port in [1, 65535], got {value!r}")
    return value


def nginx_site(
    *,
    server_name: str,
    backends: Sequence[str],
    certificate: str,
    key: str,
    listen: int = 443,
    redirect_from: int | None = 80,
    fail_timeout: int = 10,
) -> str:
    """The nginx site (the ``http`` context's part: maps, upstream and servers) for a class.

    Parameters
    ----------
    server_name : str
        The public host name, e.g. ``"lab.example.edu"``.
    backends : sequence of str
        ``host:port`` of each ``dashboard.serve`` instance.
    certificate, key : str
        Absolute paths of the TLS certificate (chain) and its private key.
    listen : int, optional
        The HTTPS port (default 443).
    redirect_from : int or None, optional
        A plain-HTTP port redirected to HTTPS (default 80; None: none).
    fail_timeout : int, optional
        Seconds a backend that failed is left out before it is tried again (default 10, in [1, 3600]).

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If a name, backend, path or port is malformed (each names the parameter).
    """
    name = _server_name(server_name)
    servers = _backends(backends)
    certificate, key = _path("certificate", certificate), _path("key", key)
    listen = _port("listen", listen)
    if redirect_from is not None:
        redirect_from = _port("redirect_from", redirect_from)
    if not isinstance(fail_timeout, int) or isinstance(fail_timeout, bool) or not 1 <= fail_timeout <= 3600:
        raise ValueError(f"fail_timeout must be whole seconds in [1, 3600], got {fail_timeout!r}")
    body_mb = -(-WEBSOCKET_MAX_MESSAGE_BYTES // 2**20)
    upstream = "\n".join(f"    server {s} max_fails=1 fail_timeout={fail_timeout}s;" for s in servers)
    port_suffix = "" if listen == 443 else f":{listen}"
    redirect = (
        ""
        if redirect_from is None
        else f"""
server {{
    listen {redirect_from};
    server_name {name};
    return 301 https://{name}{port_suffix}$request_uri;
}}
"""
    )
    return f"""# noiselab {__version__} behind nginx: python -m dashboard.deploy nginx (see docs/deployment.md)

# sticky sessions: a random key in a cookie, set on the first response, routes every later request
map $cookie_noiselab_backend $noiselab_route {{
    ""      $request_id;
    default $cookie_noiselab_backend;
}}

map $http_upgrade $noiselab_connection {{
    default upgrade;
    ""      close;
}}

upstream noiselab {{
    hash $noiselab_route consistent;
{upstream}
}}

server {{
    listen {listen} ssl http2;
    server_name {name};

    ssl_certificate     {certificate};
    ssl_certificate_key {key};
    ssl_protocols       TLSv1.2 TLSv1.3;
    ssl_session_cache   shared:noiselab:10m;

    # an uploaded CSV file travels inside one websocket message
    client_max_body_size {body_mb}m;

    location / {{
        proxy_pass http://noiselab;
        proxy_http_version 1.1;
        proxy_set_header Host $http_host;
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header Connection $noiselab_connection;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_connect_timeout 5s;
        # an open page's websocket is quiet while its student reads: keep it for an hour
        proxy_read_timeout 3600s;
        proxy_send_timeout 3600s;
        # a backend that refuses or fails: the request goes to the next one
        proxy_next_upstream error timeout http_502 http_503;
        add_header Set-Cookie "noiselab_backend=$noiselab_route; Path=/; Secure; HttpOnly; SameSite=Lax" always;
    }}
}}
{redirect}"""


def backend_command(*, port: int, server_name: str, listen: int = 443, dask_scheduler: str | None = None) -> list[str]:
    """The arguments of one backend's serve command (after ``python -m dashboard.serve``)."""
    port = _port("port", port)
    name = _server_name(server_name)
    listen = _port("listen", listen)
    origin = name if listen == 443 else f"{name}:{listen}"
    args = ["--port", str(port), "--allow-host", name, "--allow-websocket-origin", origin]
    if dask_scheduler is not None:
        if not isinstance(dask_scheduler, str) or not re.match(r"^[a-z]+://[A-Za-z0-9.\-\[\]:]+$", dask_scheduler):
            raise ValueError(f"dask_scheduler must be an address like tcp://10.0.0.5:8786, got {dask_scheduler!r}")
        args += ["--dask-scheduler", dask_scheduler]
    return args


def systemd_unit(
    *, python: str, server_name: str, listen: int = 443, user: str = "noiselab", dask_scheduler: str | None = None
) -> str:
    """A systemd template unit ``noiselab@.service``: ``systemctl enable --now noiselab@5101`` starts the
    backend on port 5101 at boot, restarts it when it ends, and sends its log to the journal."""
    python = _path("python", python)
    if not isinstance(user, str) or not re.match(r"^[a-z_][a-z0-9_-]{0,31}$", user):
        raise ValueError(f"user must be a system user name, got {user!r}")
    args = backend_command(port=5101, server_name=server_name, listen=listen, dask_scheduler=dask_scheduler)
    args[1] = "%i"  # the instance name is the port
    return f"""# noiselab {__version__}: one backend per port (python -m dashboard.deploy systemd; docs/deployment.md)
[Unit]
Description=noiselab backend on port %i
After=network-online.target
Wants=network-online.target

[Service]
User={user}
ExecStart={python} -m dashboard.serve {" ".join(args)}
Restart=always
RestartSec=2
# the web process's own memory limit: a class of 50 needs about 1 GB per backend (docs/serving.md)
MemoryMax=4G
NoNewPrivileges=true
ProtectSystem=strict
ProtectHome=true
PrivateTmp=true

[Install]
WantedBy=multi-user.target
"""


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m dashboard.deploy", description="Write the configuration to serve noiselab behind nginx."
    )
    sub = parser.add_subparsers(dest="what", required=True)
    site = sub.add_parser("nginx", help="the nginx site (to sites-available)")
    site.add_argument("--server-name", required=True)
    site.add_argument("--backend", action="append", required=True, dest="backends", help="host:port (repeatable)")
    site.add_argument("--certificate", required=True)
    site.add_argument("--key", required=True)
    site.add_argument("--listen", type=int, default=443)
    site.add_argument("--redirect-from", type=int, default=80, help="plain-HTTP port to redirect (0: none)")
    site.add_argument("--fail-timeout", type=int, default=10)
    unit = sub.add_parser("systemd", help="the backends' template unit (to /etc/systemd/system/noiselab@.service)")
    unit.add_argument("--server-name", required=True)
    unit.add_argument("--listen", type=int, default=443)
    unit.add_argument("--python", default=sys.executable)
    unit.add_argument("--user", default="noiselab")
    unit.add_argument("--dask-scheduler", default=None)
    args = parser.parse_args(argv)
    try:
        if args.what == "nginx":
            text = nginx_site(
                server_name=args.server_name,
                backends=args.backends,
                certificate=args.certificate,
                key=args.key,
                listen=args.listen,
                redirect_from=args.redirect_from or None,
                fail_timeout=args.fail_timeout,
            )
        else:
            text = systemd_unit(
                python=args.python,
                server_name=args.server_name,
                listen=args.listen,
                user=args.user,
                dask_scheduler=args.dask_scheduler,
            )
    except ValueError as exc:
        parser.error(str(exc))
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
