"""The notebook widget in a real JupyterLab page (docs/notebook.md): ``jupyter lab`` from this
environment on a free port with a token, Debian's chromium driven by Playwright (flags as in
test_viewer_browser.py), one notebook whose first cell runs ``flocksim.widget(sim)``.

One server, one page, one test: it runs the cell, sees birds drawn (the renderer's
``foregroundPixels``, the pixel check of test_viewer_browser.py), runs a second cell that steps
the simulation and sees the view follow, plays from the widget's own button, and changes the
agent count in the Basic panel (a refused value shows its one-line error).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import free_port, stop_process
from flocksim.notebook import base
from test_viewer_browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT

WIDGET_JS = base.STATIC_DIR / "widget.js"
TOKEN = "flocksim-test-token"
SERVER_START_S = 60
FIRST_FRAME_TIMEOUT_MS = 120_000
"""The kernel starts and imports flocksim (its kernels come from the numba cache this session
filled); SwiftShader draws."""
WAIT_MS = 30_000
WIDGET = "document.querySelector('.flocksim-widget')?.flocksim"

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"no chromium at {CHROMIUM} (apt-get install chromium)"),
    pytest.mark.skipif(not WIDGET_JS.exists(), reason=f"widget front end not built ({WIDGET_JS} missing)"),
]
playwright_api = pytest.importorskip("playwright.sync_api")
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("jupyterlab")

CELLS = [
    "import flocksim\n"
    "params = flocksim.apply_overrides(flocksim.load_preset('boids-2d'), ['agents.n=120'])\n"
    "sim = flocksim.Simulation(params, seed=4)\n"
    "flocksim.widget(sim)",
    "sim.step(12)",
]


@pytest.fixture
def jupyter_lab(tmp_path: Path) -> Iterator[str]:
    """``jupyter lab`` serving ``tmp_path`` (one notebook, widget.ipynb); yields the notebook's URL."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp_path / "widget.ipynb")
    port = free_port()
    home = tmp_path / "jupyter"
    # no news or update checks (no network in CI, and no toast over the page)
    settings = home / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false", "checkForUpdates": false}')
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
    }
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
        f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={tmp_path}", "--LabApp.news_url=",
        "--ServerApp.allow_root=True",  # CI runs as root
    ]  # fmt: skip
    log = (tmp_path / "jupyter.log").open("wb")
    server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            try:
                with urllib.request.urlopen(f"{base_url}/api/status?token={TOKEN}", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"jupyter lab did not start: {(tmp_path / 'jupyter.log').read_text()[-2000:]}")
            time.sleep(0.5)
        yield f"{base_url}/lab/tree/widget.ipynb?token={TOKEN}"
    finally:
        stop_process(server, 20)
        log.close()


def widget_value(page, expression: str) -> object:
    return page.evaluate(f"{WIDGET}.{expression}")


PROMPTS = ".jp-Notebook .jp-CodeCell .jp-InputPrompt"
RUN_TRIES = 3
RUN_STARTS_MS = 20_000


KERNEL_CHOICE = ".jp-Dialog .jp-mod-accept"
"""The accept button of JupyterLab's "Select Kernel" dialog."""


def accept_kernel_choice(page) -> None:
    """A run asked for while the kernel's connection is down makes JupyterLab ask which kernel to
    use (seen on a loaded machine; the dialog then takes every click): take the one it offers, the
    notebook's Python 3, as a user would."""
    button = page.locator(KERNEL_CHOICE)
    if button.count() and button.first.is_visible():
        button.first.click()
        button.first.wait_for(state="hidden", timeout=WAIT_MS)


def run_cell(page, index: int) -> None:
    """Select code cell ``index`` and run it with the toolbar's run button; wait until its prompt
    shows it queued or run (``[*]`` or ``[n]``). JupyterLab may drop a run asked for while its
    kernel connection is still settling (the prompt stays ``[ ]``): then it is asked again."""
    started = f"/\\[[*0-9]+\\]/.test(document.querySelectorAll('{PROMPTS}')[{index}]?.textContent ?? '')"
    for _ in range(RUN_TRIES):
        accept_kernel_choice(page)
        page.locator(PROMPTS).nth(index).click()
        page.locator(".jp-NotebookPanel-toolbar [data-command='notebook:run-cell-and-select-next']").click()
        try:
            page.wait_for_function(started, timeout=RUN_STARTS_MS)
            return
        except playwright_api.TimeoutError:
            continue
    pytest.fail(f"JupyterLab did not run cell {index} (asked {RUN_TRIES} times)")


def test_widget_draws_birds_in_jupyterlab_and_follows_the_kernel(jupyter_lab, tmp_path):
    errors: list[str] = []
    with playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=VIEWPORT)
        try:
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(jupyter_lab)
            # the kernel is up and idle before the cell runs
            idle = ".jp-Notebook-ExecutionIndicator[data-status='idle']"
            page.wait_for_selector(idle, timeout=FIRST_FRAME_TIMEOUT_MS)
            run_cell(page, 0)  # the cell that shows the widget
            page.wait_for_function(f"{WIDGET}?.framesDrawn >= 1", timeout=FIRST_FRAME_TIMEOUT_MS)
            assert widget_value(page, "frame.nAgents") == 120
            drawn = widget_value(page, "foregroundPixels()")
            assert drawn["foreground"] > 100, drawn  # birds on the canvas, not a blank view

            run_cell(page, 1)  # sim.step(12)
            page.wait_for_function(f"{WIDGET}.frame.step === 12", timeout=WAIT_MS)

            shown = widget_value(page, "framesDrawn")
            page.locator(".flocksim-widget .fs-play").click()  # Play: frames pulled from the kernel
            page.wait_for_function(f"{WIDGET}.framesDrawn >= {shown + 5}", timeout=WAIT_MS)
            page.locator(".flocksim-widget .fs-play").click()  # Pause
            assert widget_value(page, "frame.step") > 12

            agents = page.locator(".flocksim-widget .fs-basic [data-key='agents.n']")  # the Basic panel
            agents.fill("60")
            agents.dispatch_event("change")
            page.wait_for_function(f"{WIDGET}.frame.nAgents === 60", timeout=WAIT_MS)
            assert page.locator(".flocksim-widget .fs-error").is_hidden()
            agents.fill("-5")
            agents.dispatch_event("change")
            error = page.locator(".flocksim-widget .fs-error")
            error.wait_for(state="visible", timeout=WAIT_MS)
            assert "agents.n" in error.inner_text()
        except Exception:
            page.screenshot(path=tmp_path / "jupyterlab.png")  # what the page showed, for the failure report
            raise
        finally:
            browser.close()
    assert not errors, f"errors in the page: {errors}"
