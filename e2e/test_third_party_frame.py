"""The widget in a real third-party iframe: the page on http://127.0.0.1, the widget's
page framed from http://localhost (another site). Chromium refuses OPFS to the frame
("Storage directory access is denied"), so the harness keeps its files in memory; the
widget says so, why, and offers the workspace as a zip, and a turn still runs."""

from playwright.sync_api import expect

from e2e.test_widget import CHAT, WRITE_TURNS


def test_in_a_frame_of_another_site_the_widget_says_files_live_in_memory(page, server,
                                                                           tmp_path):
    port = server.url.rsplit(":", 1)[1]
    (tmp_path / "host.html").write_text(
        '<!doctype html><meta charset="utf-8"><title>a site that embeds another</title>'
        f'<iframe src="http://localhost:{port}/widget.html" width="900" height="700">'
        "</iframe>")
    server.add_mount("/third-party/", tmp_path)
    page.goto(f"http://127.0.0.1:{port}/third-party/host.html")
    frame = page.frame_locator("iframe")
    inner = next(f for f in page.frames if f.url.startswith("http://localhost:"))
    inner.wait_for_function("document.body.dataset.loaded === 'yes'")
    assert inner.evaluate("location.origin") != page.evaluate("location.origin")
    inner.evaluate("([a, o]) => { mount(a, o); }", [{}, WRITE_TURNS])
    inner.wait_for_function(f"document.querySelector('{CHAT}')?.dataset.state === 'ready'",
                            timeout=60_000)
    assert frame.locator(f"{CHAT} .status").inner_text().strip() == "Ready (in memory)"
    notice = frame.locator(f"{CHAT} .notice", has_text="Files are kept in memory only")
    expect(notice).to_be_visible()
    assert "OPFS is not available" in notice.inner_text()  # the browser's own reason
    expect(notice.get_by_role("button", name="Download the workspace")).to_be_visible()
    frame.locator(f"{CHAT} textarea").fill("Write out/hello.py")
    frame.locator(f"{CHAT} textarea").press("Enter")
    inner.wait_for_function("window.lastResult !== undefined", timeout=60_000)
    assert inner.evaluate("window.lastResult")["stopReason"] == "stop"
    read = "document.querySelector('pyharness-chat').harness.fs.readFile('out/hello.py', 'utf8')"
    assert inner.evaluate(read) == "print('hello from the model')\n"
