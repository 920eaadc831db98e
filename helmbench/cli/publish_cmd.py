"""`helmbench publish` (the static site) and `helmbench serve` (the raw rows in Datasette).

mkdocs, matplotlib and datasette are imported inside the command bodies only.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from helmbench.cli.app import app

DEFAULT_DATASETTE_URL = "http://127.0.0.1:8001"  # helmbench.publish.settings.DEFAULT_DATASETTE_URL


@app.command()
def publish(
    db: Optional[Path] = typer.Option(None, "--db", help="The results database (default build/results.db beside the benchmark, or beside a named manifest in a benchmark's build/; a missing one gives a site that says how to run)."),
    manifest: Optional[Path] = typer.Option(None, "--manifest", help="The compiled manifest: which run to publish (default build/manifest.jsonl; when named, it must exist; in a benchmark's build/, the database and site default to that folder)."),
    datasette_url: str = typer.Option(DEFAULT_DATASETTE_URL, "--datasette-url", help="Public URL of a Datasette serving the results (`helmbench serve --publish`): the raw-rows links point there. The local default is never linked: the pages say how to browse the rows with `helmbench serve`."),
    config_file: Optional[Path] = typer.Option(None, "--config-file", "-f", help="An mkdocs.yml whose keys override the packaged site configuration (default: mkdocs.yml beside the benchmark, if any)."),
    site_dir: Optional[Path] = typer.Option(None, "--site-dir", help="Output folder (default: build/site, the build/ of a named manifest's benchmark when it is in one)."),
    strict: bool = typer.Option(False, "--strict", help="Fail on any mkdocs warning."),
    include_imported: bool = typer.Option(False, "--include-imported", help="Rank imported conversations (`helmbench import transcripts`) on the leaderboard beside live runs, marked as imported (default: they have their own pages and are never ranked)."),
    allow_site_code: bool = typer.Option(False, "--allow-site-code", help="Also take the hooks, plugins, custom templates, scripts and other Markdown extensions of the benchmark's mkdocs.yml (code from the repository: only if you trust it)."),
) -> None:
    """Build the static leaderboard site into build/site/ (wraps `mkdocs build`).

    Generates the leaderboard, a page per model, scenario and case, and the methodology from
    the results database at build time. The site works offline and makes no third-party request.
    Works in any folder holding a benchmark: the site's configuration and pages come with
    helmbench; a mkdocs.yml or site/ folder beside the benchmark overrides or extends them. That
    mkdocs.yml is read as data (no !ENV, no Python tags); its hooks, plugins, custom templates and
    scripts are left out unless you pass --allow-site-code.

    Examples:

        helmbench publish

        helmbench publish --db build/results.db --datasette-url https://data.example.org

        helmbench publish --include-imported
    """
    import time

    from helmbench import api
    from helmbench.cli import validate
    from helmbench.terminal import printable

    named_manifest = manifest is not None
    db, manifest, site_dir = api.in_build(db=db, manifest=manifest, site_dir=site_dir)
    validate.publish_paths(db, manifest, config_file, site_dir, manifest_named=named_manifest)
    started = time.perf_counter()
    out = api.publish(db, site_dir, manifest=manifest, datasette_url=datasette_url, config_file=config_file,
                      strict=strict, project_dir=api.project_dir(), allow_site_code=allow_site_code,
                      show_log=True, include_imported=include_imported)
    note = "" if db.is_file() else " (no run has been made yet, dry run only: the leaderboard says how to make one)"
    print(f"site built in {time.perf_counter() - started:.1f} s → {printable(str(out))}{note}")
    shown = api.site_note(db, manifest)  # the sentence `report` and `agreement` say in the same case
    if shown:
        print(f"note: {printable(shown)}", file=sys.stderr)


@app.command()
def serve(
    port: int = typer.Option(8001, "--port", "-p", min=0, max=65535, help="Port on 127.0.0.1."),
    db: Optional[Path] = typer.Option(None, "--db", help="The live results database to snapshot (default build/results.db beside the benchmark)."),
    publish_dir: Optional[Path] = typer.Option(None, "--publish", help="Write the snapshot and metadata.json here for `datasette publish`, and do not serve."),
    serve_dir: Optional[Path] = typer.Option(None, "--serve-dir", help="Where snapshots and metadata.json are kept (default build/serve)."),
    site_url: Optional[str] = typer.Option(None, "--site-url", help="URL of the published site, linked from Datasette."),
    allow_host: list[str] = typer.Option([], "--allow-host", help="Also answer requests addressed to this host name (with the port); repeatable. Others get 421 (no DNS rebinding)."),
) -> None:
    """Serve the raw results read-only in Datasette, from a consistent snapshot of the database.

    Snapshots the database with `VACUUM INTO` (a run may be writing to it), generates metadata
    (descriptions, facets, canned queries such as leaderboard and case_across_models) and runs
    Datasette on SNAPSHOT (immutable) on 127.0.0.1, answering only requests addressed to
    127.0.0.1 or localhost with its port (and --allow-host names). Ctrl-C stops it. `--publish`
    writes a public copy: only the tables the leaderboard reads (no reviews, no generations), and
    plugins/ to give the host as --plugins-dir (only plain SQL: no fts3_tokenizer()).

    Examples:

        helmbench serve --port 8001

        helmbench serve --publish build/datasette   # then: datasette publish … --plugins-dir build/datasette/plugins
    """
    from helmbench import api
    from helmbench.cli import validate

    db, serve_dir = api.in_build(db=db, serve_dir=serve_dir)
    validate.db_to_read(db), validate.output_dir(publish_dir if publish_dir is not None else serve_dir,
                                                 "--publish" if publish_dir is not None else "--serve-dir")
    if publish_dir is not None:
        public = api.datasette_publish(db, publish_dir, site_url=site_url)
        snap, meta, plugins = public.snapshot, public.metadata, public.plugins
        print(f"snapshot {snap}\nmetadata {meta}\nplugins  {plugins} (keeps SQL plain: no fts3_tokenizer())")
        print(f"publish with, e.g.: datasette publish cloudrun {snap} --metadata {meta} --plugins-dir {plugins} "
              "--service helmbench")
        print("a public host must be started with that --plugins-dir, or visitors' SQL reaches native pointers")
        return
    served = api.datasette_serve(db, serve_dir, port=port, site_url=site_url, allow_hosts=allow_host)
    _run_datasette(served.command, port, served.snapshot)


def _run_datasette(command: list[str], port: int, snap: Path) -> None:
    """Run Datasette in the foreground; Ctrl-C (or SIGTERM) stops it and exits 130."""
    import signal
    import subprocess

    def terminate(signum, frame):
        raise KeyboardInterrupt

    # Ctrl-C must stop the server even when SIGINT was ignored by whoever started us.
    previous = {sig: signal.signal(sig, handler)
                for sig, handler in ((signal.SIGTERM, terminate), (signal.SIGINT, signal.default_int_handler))}
    print(f"serving {snap} read-only at http://127.0.0.1:{port}/results (Ctrl-C stops)", file=sys.stderr, flush=True)
    proc = subprocess.Popen(command)
    try:
        code = proc.wait()
    except KeyboardInterrupt:
        _stop(proc)
        print("stopped", file=sys.stderr)
        raise typer.Exit(130)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if code != 0:
        from helmbench.errors import HelmbenchError

        raise HelmbenchError(f"datasette exited with status {code}")


def _stop(proc) -> None:
    import signal
    import subprocess

    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
