"""The deployment writer: what the nginx site and the systemd unit say, and its refusals."""

import subprocess
import sys

import pytest

from dashboard.deploy import backend_command, nginx_site, systemd_unit
from dashboard.uploads import WEBSOCKET_MAX_MESSAGE_BYTES

SITE = {
    "server_name": "lab.example.edu",
    "backends": ["127.0.0.1:5101", "127.0.0.1:5102"],
    "certificate": "/etc/ssl/certs/lab.pem",
    "key": "/etc/ssl/private/lab.key",
}


def test_the_site_routes_by_a_cookie_key_and_upgrades_websockets():
    site = nginx_site(**SITE)
    assert "hash $noiselab_route consistent;" in site
    assert "server 127.0.0.1:5101 max_fails=1 fail_timeout=10s;" in site
    assert "server 127.0.0.1:5102 max_fails=1 fail_timeout=10s;" in site
    assert 'Set-Cookie "noiselab_backend=$noiselab_route; Path=/; Secure; HttpOnly; SameSite=Lax" always' in site
    assert (
        "proxy_set_header Upgrade $http_upgrade;" in site
        and "proxy_set_header Connection $noiselab_connection;" in site
    )
    assert "listen 443 ssl http2;" in site and "server_name lab.example.edu;" in site
    assert "ssl_protocols       TLSv1.2 TLSv1.3;" in site
    assert "return 301 https://lab.example.edu$request_uri;" in site  # plain HTTP is redirected
    # the largest upload's websocket message passes the proxy
    limit = int(site.split("client_max_body_size ")[1].split("m;")[0])
    assert limit * 2**20 >= WEBSOCKET_MAX_MESSAGE_BYTES
    assert "proxy_read_timeout 3600s;" in site and "proxy_next_upstream error timeout http_502 http_503;" in site


def test_a_port_other_than_443_is_in_the_redirect_and_the_backends_origin():
    site = nginx_site(**{**SITE, "listen": 8443, "redirect_from": None})
    assert "listen 8443 ssl http2;" in site and "return 301" not in site
    args = backend_command(port=5101, server_name="lab.example.edu", listen=8443)
    assert args == [
        "--port",
        "5101",
        "--allow-host",
        "lab.example.edu",
        "--allow-websocket-origin",
        "lab.example.edu:8443",
    ]


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"server_name": "lab example"}, "server_name"),
        ({"server_name": "lab.edu; evil"}, "server_name"),
        ({"backends": []}, "backends"),
        ({"backends": ["127.0.0.1"]}, "backends"),
        ({"backends": ["127.0.0.1:70000"]}, "backends"),
        ({"backends": ["127.0.0.1:5101", "127.0.0.1:5101"]}, "backends"),
        ({"certificate": "relative.pem"}, "certificate"),
        ({"key": "/etc/ssl/a key;"}, "key"),
        ({"listen": 0}, "listen"),
        ({"fail_timeout": 0}, "fail_timeout"),
    ],
)
def test_malformed_settings_are_refused_by_name(change, name):
    with pytest.raises(ValueError, match=name):
        nginx_site(**{**SITE, **change})


def test_the_unit_starts_one_backend_per_port_and_restarts_it():
    unit = systemd_unit(python="/opt/noiselab/.venv/bin/python", server_name="lab.example.edu")
    assert "ExecStart=/opt/noiselab/.venv/bin/python -m dashboard.serve --port %i --allow-host lab.example.edu" in unit
    assert "Restart=always" in unit and "WantedBy=multi-user.target" in unit and "User=noiselab" in unit
    with_dask = systemd_unit(
        python="/usr/bin/python3", server_name="lab.example.edu", dask_scheduler="tcp://10.0.0.5:8786"
    )
    assert "--dask-scheduler tcp://10.0.0.5:8786" in with_dask
    with pytest.raises(ValueError, match="dask_scheduler"):
        systemd_unit(python="/usr/bin/python3", server_name="lab.example.edu", dask_scheduler="tcp://x; rm")
    with pytest.raises(ValueError, match="user"):
        systemd_unit(python="/usr/bin/python3", server_name="lab.example.edu", user="root; x")


@pytest.mark.subprocess
def test_the_command_names_a_bad_setting_and_exits_2():
    result = subprocess.run(
        [
            *(sys.executable, "-m", "dashboard.deploy", "nginx", "--server-name", "a b"),
            *("--backend", "127.0.0.1:1", "--certificate", "/c.pem", "--key", "/k.pem"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "server_name must be a host name" in result.stderr
    assert "Traceback" not in result.stderr
