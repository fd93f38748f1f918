"""The `make demo` page: the offline scripted demo working on real files, and the real
`pyharness demo` command (a smoke row) with a model from the environment."""

import os
import subprocess
import sys
import urllib.request

from e2e.conftest import BUNDLE, ROOT

CHAT = "pyharness-chat"


def wait_seeded(page):
    page.wait_for_function("document.body.dataset.seeded === 'yes'", timeout=60_000)


def wait_log(page, text):
    page.wait_for_function(f"document.querySelector('{CHAT}').shadowRoot.querySelector('[role=log]').textContent.includes({text!r})", timeout=60_000)
    page.wait_for_function(f"document.querySelector('{CHAT}').dataset.state === 'ready'")


def test_offline_demo_runs_its_script_on_real_files(page, server):
    page.goto(f"{server.url}/demo/")
    wait_seeded(page)
    assert page.locator("#banner").is_visible() and "scripted" in page.inner_text("#banner")
    assert page.inner_text("#source") == "Offline demo · scripted model"
    chat = page.locator(CHAT)
    assert "bash" in chat.locator(".chips").inner_text()  # the shell is on
    chat.locator(".suggestion").first.click()
    wait_log(page, "Open report.md or summarize.py")
    cards = chat.locator("details.tool")
    assert [c.get_attribute("data-tool") for c in cards.all()] == ["ls", "read", "write", "bash", "edit", "bash"]
    assert [c.get_attribute("data-state") for c in cards.all()] == ["ok"] * 6
    cards.nth(3).locator("summary").click()
    assert "East     350" in cards.nth(3).locator("pre.out").inner_text()  # python3 really ran
    chat.locator(".entry.file[data-path='report.md']").click()
    chat.locator(".viewer pre").wait_for()
    assert "| East | 350 |" in chat.locator(".viewer pre").inner_text()
    # the second scripted prompt: a test, run in the shell
    chat.locator("textarea").fill("Add a test for summarize.py and run it")
    chat.locator("textarea").press("Enter")
    wait_log(page, "The test passes")
    assert "test_totals passed" in chat.locator("details.tool").last.text_content()
    assert chat.locator("details.tool[data-state=error]").count() == 0

    # reload: the work is still there (files, the conversation, the tool cards), and the
    # seed does not overwrite what changed
    page.evaluate(f"document.querySelector('{CHAT}').harness.fs.writeFile('README.md', 'mine')")
    page.reload()
    wait_seeded(page)
    page.wait_for_function(f"document.querySelector('{CHAT}').dataset.state === 'ready'")
    assert [c.get_attribute("data-tool") for c in chat.locator("details.tool").all()][:6] == [
        "ls", "read", "write", "bash", "edit", "bash"]
    assert "The test passes" in chat.locator("[role=log]").inner_text()
    chat.locator(".entry.file[data-path='report.md']").wait_for()
    assert page.evaluate(f"document.querySelector('{CHAT}').harness.fs.readFile('README.md', 'utf8')") == "mine"


def test_pyharness_demo_serves_and_boots_with_a_model_from_the_environment(page, provider):
    provider.script([{"text": "Hello from the environment's model."}])
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(PYHARNESS_MODEL_API="openai-chat", PYHARNESS_BASE_URL=provider.base_url,
               PYHARNESS_MODEL="gpt-demo", PYHARNESS_API_KEY="sk-demo")
    proc = subprocess.Popen([sys.executable, "-m", "tooling.cli", "demo", "--port", "0", "--no-build",
                             "--bundle", str(BUNDLE)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("demo: http://127.0.0.1:"), line
        assert "sk-demo" not in line and "openai-chat gpt-demo" in line
        url = line.split()[1]
        with urllib.request.urlopen(url) as response:
            assert response.status == 200 and b"pyharness-chat" in response.read()
        page.goto(url)
        wait_seeded(page)
        assert page.inner_text("#source") == "openai-chat gpt-demo · from the environment"
        assert not page.locator("#banner").is_visible()
        chat = page.locator(CHAT)
        chat.locator("textarea").fill("hello")
        chat.locator("textarea").press("Enter")
        wait_log(page, "Hello from the environment's model.")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    request = next(r for r in provider.requests if r.method == "POST")
    assert request.headers["authorization"] == "Bearer sk-demo"
    assert request.body["model"] == "gpt-demo"


def test_a_model_entered_in_the_settings(page, server, provider):
    provider.script([{"text": "Hello from the settings' model."}])
    page.goto(f"{server.url}/demo/")
    wait_seeded(page)
    page.click("#open-settings")
    page.select_option("select[name=api]", "openai-chat")
    page.fill("input[name=baseUrl]", provider.base_url)
    page.fill("input[name=model]", "gpt-settings")
    page.fill("input[name=apiKey]", "sk-settings")
    page.evaluate("document.body.dataset.seeded = 'no'")
    page.click("button[value=save]")
    wait_seeded(page)  # the widget restarted with the new model and was seeded again
    assert page.inner_text("#source") == "openai-chat gpt-settings · from settings"
    assert not page.locator("#banner").is_visible()
    chat = page.locator(CHAT)
    chat.locator("textarea").fill("hello")
    chat.locator("textarea").press("Enter")
    wait_log(page, "Hello from the settings' model.")
    request = next(r for r in provider.requests if r.method == "POST")
    assert request.headers["authorization"] == "Bearer sk-settings"
    # kept for this tab only: a reload uses it again
    page.reload()
    wait_seeded(page)
    assert page.inner_text("#source") == "openai-chat gpt-settings · from settings"
