"""The ``pyharness`` command: build the bundle, serve it, the demo, the schema, run offline."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import json
import os
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pyharness", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser(
        "build", help="assemble the self-hosted static bundle",
        description="Assemble the self-hosted static bundle. --package, --requirements and "
        "--wheels add Python packages to the sandbox's own package index "
        "(dist/pyodide/sandbox-lock.json, beside micropip, which is always there), which "
        "code in the sandbox installs with micropip; nothing of it loads at boot. pip "
        "resolves them with their dependencies for Pyodide 314 (CPython 3.14): each must "
        "have a pure-Python wheel (py3-none-any) or one built for "
        "pyemscripten_2026_0_wasm32, or the build fails naming the wheel.")
    p.add_argument("--out", type=Path, default=Path("dist"), help="output directory (dist)")
    p.add_argument("--wheel-cache", type=Path,
                   help="where pinned wheels are kept, and under packages/ the resolved "
                   "sandbox packages (.cache/wheels)")
    p.add_argument("--offline", action="store_true",
                   help="never call pip download: every wheel must be in the wheel cache "
                   "(sandbox packages: resolved by an earlier build with the same options)")
    p.add_argument("--package", action="append", default=[], metavar="NAME==VERSION",
                   help="add a package from PyPI to the sandbox's index, with its "
                   "dependencies (repeatable; any pip requirement works, pin it for a "
                   "reproducible bundle), e.g. --package tabulate==0.10.0")
    p.add_argument("--requirements", action="append", default=[], type=Path, metavar="FILE",
                   help="add every package of a pip requirements file to the sandbox's "
                   "index, with their dependencies (repeatable)")
    p.add_argument("--wheels", action="append", default=[], type=Path, metavar="DIR",
                   help="add every *.whl file in DIR to the sandbox's index, and let pip "
                   "find packages and dependencies there too (a --find-links; repeatable)")

    p = sub.add_parser("serve", help="serve directories on 127.0.0.1 (demo, tests)")
    p.add_argument("dir", nargs="?", type=Path, default=Path("dist"))
    p.add_argument("--mount", action="append", default=[], metavar="PREFIX=DIR",
                   help="serve DIR at URL PREFIX (repeatable); replaces DIR")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--isolate", action="store_true",
                   help="send COOP/COEP headers (cross-origin isolation, SharedArrayBuffer)")

    p = sub.add_parser("demo", help="build if needed, serve the widget demo on 127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--bundle", type=Path, default=Path("dist"), help="bundle directory (dist)")
    p.add_argument("--no-build", action="store_true", help="serve the bundle as it is")
    p.add_argument("--isolate", action="store_true", help="send COOP/COEP headers")

    p = sub.add_parser("bench", help="measure boot, bridge, shell and loop against baselines")
    from .bench.__main__ import add_arguments as bench_arguments

    bench_arguments(p)

    p = sub.add_parser("schema", help="print or write the event schema and the .d.ts files")
    p.add_argument("--write", action="store_true",
                   help="write embed/events.* and embed/page/model-apis.mjs")

    p = sub.add_parser("run", help="run the agent on CPython over a directory (scripted)")
    p.add_argument("prompt")
    p.add_argument("--workspace", type=Path, default=Path("."), help="directory as /work")
    p.add_argument("--script", type=Path, required=True,
                   help='JSON file: {"turns": [{"text": ..., "toolCalls": [...]}]}')
    p.add_argument("--threads", type=Path, metavar="DIR",
                   help="keep the conversations in DIR (outside the workspace) and continue "
                   "the current one; without it they are kept in memory for this run only")
    p.add_argument("--new-thread", action="store_true",
                   help="start a new conversation in --threads rather than continue")

    args = parser.parse_args(argv)
    if args.command == "build":
        return _build(args)
    if args.command == "serve":
        return _serve(args)
    if args.command == "demo":
        return _demo(args)
    if args.command == "schema":
        return _schema(args)
    if args.command == "bench":
        from .bench.__main__ import run_cli

        return run_cli(args)
    return _run(args)


def _build(args: argparse.Namespace) -> int:
    from .build.bundle import build
    from .build.wheels import BuildError

    started = time.monotonic()
    try:
        out = build(args.out.resolve(), wheel_cache=args.wheel_cache, offline=args.offline,
                    packages=args.package, requirements=args.requirements,
                    wheel_dirs=args.wheels)
    except BuildError as exc:
        print(f"pyharness build: {exc}", file=sys.stderr)
        return 1
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(f"built {out} ({size / 1e6:.1f} MB) in {time.monotonic() - started:.1f}s; "
          f"entry module: {out / 'pyharness.mjs'}")
    return 0


def _serve(args: argparse.Namespace) -> int:
    from .serve import StaticServer

    mounts = dict(m.split("=", 1) for m in args.mount) if args.mount else {"/": args.dir}
    try:
        server = StaticServer({k: Path(v) for k, v in mounts.items()}, args.host, args.port,
                              isolate=args.isolate)
    except OSError as exc:
        print(f"pyharness serve: {_bind_error(exc, args.host, args.port)}", file=sys.stderr)
        return 1
    print(f"serving {', '.join(f'{k} -> {v}' for k, v in mounts.items())} at {server.url}/",
          flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.httpd.serve_forever()
    return 0


DEMO_MODELS = {"openai-chat": "gpt-4.1-mini", "anthropic-messages": "claude-sonnet-4-5"}
DEMO_KEYS = {"openai-chat": "OPENAI_API_KEY", "anthropic-messages": "ANTHROPIC_API_KEY"}


def demo_model(env: Mapping[str, str]) -> tuple[dict[str, Any] | None, str]:
    """The demo's model from the environment (None: the offline scripted demo), and a
    description of it for the console that never contains the key."""
    from harness.errors import UsageError

    base = env.get("PYHARNESS_BASE_URL", "").strip()
    api = env.get("PYHARNESS_MODEL_API", "").strip() or ("openai-chat" if base else "")
    if not api:
        api = next((a for a, var in DEMO_KEYS.items() if env.get(var)), "")
    if not api or api == "scripted":
        return None, ("offline scripted demo; for a real model set PYHARNESS_MODEL_API, "
                      "OPENAI_API_KEY or ANTHROPIC_API_KEY, or use the page's Settings")
    if api not in DEMO_MODELS:
        raise UsageError(f"PYHARNESS_MODEL_API={api!r} is not a wire API: use openai-chat, "
                         "anthropic-messages or scripted")
    name = env.get("PYHARNESS_MODEL", "").strip() or (DEMO_MODELS[api] if not base else "")
    if not name:
        raise UsageError(f"set PYHARNESS_MODEL to the name of a model served at {base}")
    key = env.get("PYHARNESS_API_KEY") or env.get(DEMO_KEYS[api]) or ""
    model: dict[str, Any] = {"api": api, "model": name}
    if base:
        model["baseUrl"] = base
    if key:
        model["apiKey"] = key
    where = f" at {base}" if base else ""
    return model, f"{api} {name}{where}, from the environment{'' if key else ' (no API key)'}"


def _demo(args: argparse.Namespace) -> int:
    from harness.errors import UsageError

    from .build.bundle import build, repo_root
    from .build.wheels import BuildError
    from .serve import StaticServer

    bundle = args.bundle.resolve()
    try:
        model, description = demo_model(os.environ)
        root = repo_root()
        if not args.no_build and _bundle_is_stale(bundle, root):
            print(f"building the bundle into {bundle} …", flush=True)
            build(bundle, root)
    except (UsageError, BuildError) as exc:
        print(f"pyharness demo: {exc}", file=sys.stderr)
        return 1
    if not (bundle / "widget.mjs").exists():
        print(f"pyharness demo: no bundle with the widget at {bundle}; run `pyharness build`",
              file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="pyharness-demo-") as config:
        # The page reads its model from here; the key stays on 127.0.0.1.
        Path(config, "model.json").write_text(json.dumps({"model": model,
                                                          "source": description}))
        mounts = {"/": root / "demo", "/pyharness/": bundle, "/config/": Path(config)}
        try:
            server = StaticServer(mounts, "127.0.0.1", args.port, isolate=args.isolate)
        except OSError as exc:
            print(f"pyharness demo: {_bind_error(exc, '127.0.0.1', args.port)}",
                  file=sys.stderr)
            return 1
        print(f"demo: {server.url}/  (model: {description}; Ctrl-C to stop)", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            server.httpd.serve_forever()
    return 0


def _bind_error(exc: OSError, host: str, port: int) -> str:
    """One line for a server that could not listen, naming the option that fixes it."""
    if exc.errno == errno.EADDRINUSE:
        return (f"port {port} on {host} is already in use; pick another with --port N "
                "(make demo: PORT=N)")
    if exc.errno == errno.EACCES:
        return f"not allowed to listen on port {port}; use a port above 1023 with --port N"
    return f"cannot listen on {host}:{port} ({exc.strerror or exc}); try another --port or --host"


def _bundle_is_stale(bundle: Path, root: Path) -> bool:
    """No bundle yet, or a source it is built from changed since."""
    manifest = bundle / "manifest.json"
    if not manifest.exists():
        return True
    built = manifest.stat().st_mtime
    sources = [*root.glob("embed/**/*"), *root.glob("shell/*.mjs"), *root.glob("shell/*.py"),
               *root.glob("harness/**/*.py"), *root.glob("tooling/build/*"),
               root / "pyproject.toml", root / "package-lock.json"]
    return any(p.is_file() and p.stat().st_mtime > built for p in sources)


def _schema(args: argparse.Namespace) -> int:
    from .schema import (
        model_apis_module,
        options_typescript,
        schema_json,
        typescript,
        with_init_row,
    )

    if not args.write:
        print(schema_json(), end="")
        return 0
    embed = Path(__file__).resolve().parents[1] / "embed"
    written = {embed / "shared" / "events.schema.json": schema_json(),
               embed / "shared" / "events.d.ts": typescript(),
               embed / "shared" / "options.d.ts": options_typescript(),
               embed / "page" / "model-apis.mjs": model_apis_module()}
    protocol = embed.parent / "docs" / "protocol.md"
    written[protocol] = with_init_row(protocol.read_text())  # its init row
    for path, text in written.items():
        path.write_text(text)
    print("wrote " + ", ".join(str(p) for p in written))
    return 0


def _run(args: argparse.Namespace) -> int:
    from harness.errors import UsageError
    from harness.runtime.native import NativeRuntime
    from harness.session import Session

    script = json.loads(args.script.read_text())
    options = json.dumps({"model": {"api": "scripted", **script}})
    try:
        runtime = NativeRuntime(str(args.workspace),
                                threads=None if args.threads is None else str(args.threads),
                                on_message=lambda m: print(json.dumps(m), flush=True))
        session = Session.from_options(options, runtime)
    except UsageError as exc:
        print(f"pyharness run: {exc}", file=sys.stderr)
        return 1
    if args.new_thread:
        session.threads(json.dumps({"op": "create"}))

    async def go() -> str:
        result = await session.prompt("cli", args.prompt)
        return str(result.stop_reason)

    return 0 if asyncio.run(go()) == "stop" else 1


if __name__ == "__main__":
    sys.exit(main())
