import urllib.request

import pytest

from tests.ui.conftest import bokeh_value, show_tab, wait_for_app

pytestmark = pytest.mark.ui


def move_epsilon(page, key, before):
    """Press an arrow key ten times on the epsilon slider; wait until the boundary curve changes."""
    handle = page.locator(".noUi-handle").first
    handle.focus()
    for _ in range(10):
        handle.press(key)
    page.wait_for_function(
        f"() => Number(Bokeh.documents[0].get_model_by_name('boundary-psi').data.linear[0]) !== {before}",
        timeout=10_000,
    )


def test_served_app_answers_http(server_url):
    with urllib.request.urlopen(server_url, timeout=30) as resp:
        body = resp.read().decode()
    assert resp.status == 200
    assert "noiselab" in body
    with urllib.request.urlopen(server_url + "assets/logo.svg", timeout=10) as resp:
        assert resp.status == 200


def test_page_renders_offline_without_errors(watched_page, server_url):
    watched_page.goto(server_url)
    wait_for_app(watched_page)
    watched_page.wait_for_timeout(1000)
    assert watched_page.problems == []


def test_dragging_epsilon_redraws_the_boundaries(watched_page, server_url):
    page = watched_page
    page.goto(server_url)
    wait_for_app(page)
    show_tab(page, "Privacy boundaries")
    before = bokeh_value(page, "boundary-psi", "linear", 0)
    move_epsilon(page, "ArrowRight", before)
    assert bokeh_value(page, "boundary-psi", "linear", 0) != before
    assert page.problems == []


def test_play_advances_frames(watched_page, server_url):
    page = watched_page
    page.goto(server_url)
    wait_for_app(page)
    start = bokeh_value(page, "rewind-now", "t")
    page.locator("button.play").first.click()
    page.wait_for_function(
        f"() => Number(Bokeh.documents[0].get_model_by_name('rewind-now').data.t[0]) < {start}", timeout=10_000
    )
    first = bokeh_value(page, "rewind-now", "t")
    page.wait_for_timeout(500)
    second = bokeh_value(page, "rewind-now", "t")
    assert second < first < start  # frames keep advancing towards smaller noise
    assert page.problems == []


def test_url_holds_the_settings(watched_page, server_url):
    page = watched_page
    link = server_url + "?eps=3&seed=4"
    page.goto(link)
    wait_for_app(page)
    show_tab(page, "Privacy boundaries")
    from_link = bokeh_value(page, "boundary-psi", "linear", 0)
    page.goto(link)
    wait_for_app(page)
    show_tab(page, "Privacy boundaries")
    assert bokeh_value(page, "boundary-psi", "linear", 0) == from_link  # the link reproduces the view
    show_tab(page, "Low-privacy noise")
    page.get_by_text("At epsilon = 3,").first.wait_for(timeout=10_000)  # views refreshed on release only follow too
    page.goto(server_url)
    wait_for_app(page)
    show_tab(page, "Privacy boundaries")
    assert bokeh_value(page, "boundary-psi", "linear", 0) != from_link  # and it did set epsilon
    assert page.problems == []


def test_sessions_are_independent_and_disconnect_is_harmless(browser, server_url):
    first = browser.new_page()
    second = browser.new_page()
    for page in (first, second):
        page.goto(server_url)
        wait_for_app(page)
        show_tab(page, "Privacy boundaries")
    base = bokeh_value(second, "boundary-psi", "linear", 0)
    move_epsilon(first, "ArrowLeft", base)
    assert bokeh_value(second, "boundary-psi", "linear", 0) == base
    show_tab(first, "Brownian rewind")
    first.locator("button.play").first.click()
    first.wait_for_timeout(300)
    first.close()  # disconnect mid-animation
    with urllib.request.urlopen(server_url, timeout=30) as resp:
        assert resp.status == 200
    third = browser.new_page()
    third.goto(server_url)
    wait_for_app(third)
    third.close()
    second.close()
