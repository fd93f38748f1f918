"""The `make demo` page: boots, runs its scripted turn, shows the files through h.fs."""


def test_demo_page_runs_the_scripted_turn(page, server):
    page.goto(f"{server.url}/demo/")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('ready')")
    page.click("#run")
    page.wait_for_function("document.body.dataset.runState !== undefined")
    assert page.evaluate("document.body.dataset.runState") == "stop"
    assert "hello.py" in page.inner_text("#answer")
    files = page.inner_text("#files")
    assert 'print(f"hello {name}")' in files and "Seeded by the page" in files
    assert page.locator("#events .err").count() == 0
