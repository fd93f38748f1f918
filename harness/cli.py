"""The ``pyharness`` command: build the bundle, serve it, publish the schema, run offline."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pyharness", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("build", help="assemble the self-hosted static bundle")
    p.add_argument("--out", type=Path, default=Path("dist"), help="output directory (dist)")
    p.add_argument("--wheel-cache", type=Path, help="where pinned wheels are kept")
    p.add_argument("--offline", action="store_true", help="never call pip download")

    p = sub.add_parser("serve", help="serve directories on 127.0.0.1 (demo, tests)")
    p.add_argument("dir", nargs="?", type=Path, default=Path("dist"))
    p.add_argument("--mount", action="append", default=[], metavar="PREFIX=DIR",
                   help="serve DIR at URL PREFIX (repeatable); replaces DIR")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--host", default="127.0.0.1")

    p = sub.add_parser("schema", help="print or write the event JSON Schema and .d.ts")
    p.add_argument("--write", action="store_true", help="write embed/events.*")

    p = sub.add_parser("run", help="run the agent on CPython over a directory (scripted)")
    p.add_argument("prompt")
    p.add_argument("--workspace", type=Path, default=Path("."), help="directory as /work")
    p.add_argument("--script", type=Path, required=True,
                   help='JSON file: {"turns": [{"text": ..., "toolCalls": [...]}]}')

    args = parser.parse_args(argv)
    if args.command == "build":
        return _build(args)
    if args.command == "serve":
        return _serve(args)
    if args.command == "schema":
        return _schema(args)
    return _run(args)


def _build(args: argparse.Namespace) -> int:
    from .build.bundle import build
    from .build.wheels import BuildError

    started = time.monotonic()
    try:
        out = build(args.out.resolve(), wheel_cache=args.wheel_cache, offline=args.offline)
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
    server = StaticServer({k: Path(v) for k, v in mounts.items()}, args.host, args.port)
    print(f"serving {', '.join(f'{k} -> {v}' for k, v in mounts.items())} at {server.url}/",
          flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.httpd.serve_forever()
    return 0


def _schema(args: argparse.Namespace) -> int:
    from .schema import schema_json, typescript

    if not args.write:
        print(schema_json(), end="")
        return 0
    embed = Path(__file__).resolve().parents[1] / "embed"
    (embed / "events.schema.json").write_text(schema_json())
    (embed / "events.d.ts").write_text(typescript())
    print(f"wrote {embed / 'events.schema.json'} and {embed / 'events.d.ts'}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from .runtime.native import NativeRuntime
    from .session import Session

    script = json.loads(args.script.read_text())
    config = json.dumps({"model": {"api": "scripted", **script}})
    runtime = NativeRuntime(lambda m: print(json.dumps(m), flush=True))
    session = Session.create(config, str(args.workspace), runtime)

    async def go() -> str:
        result = await session.prompt("cli", args.prompt)
        return str(result.stop_reason)

    return 0 if asyncio.run(go()) == "stop" else 1


if __name__ == "__main__":
    sys.exit(main())
