"""``verify``: list, run, report and probe the claims of the two papers.

Every bad input ends in one line on stderr (``verify: error: ...``) and exit
status 2; a check that finds a claim violated is a finding, not an error.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from theorems.context import BUDGETS, Context

DEFAULT_RESULTS = Path("reports/results")
DEFAULT_REPORT = Path("reports/report.html")


class _DefaultsShown(argparse.HelpFormatter):
    """Each option's help ends with its default, where it has one worth showing (not None, not a flag's False)."""

    def _get_help_string(self, action):
        h = action.help or ""
        if ("default" not in h and action.option_strings and action.default is not None
                and action.default is not False and action.default is not argparse.SUPPRESS):
            h += " (default: %(default)s)"
        return h


class UsageError(Exception):
    """Bad input: reported as one line and a non-zero exit, never a traceback."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own errors: one line, exit 2
        raise UsageError(message)


def resolve_device(name: str) -> str:
    import torch

    if name == "cuda" and not torch.cuda.is_available():
        raise UsageError("--device cuda was asked for but no CUDA device is available")
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return name


def ensure_writable_dir(path: Path, what: str) -> Path:
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".probe-"):
            pass
    except OSError as e:
        raise UsageError(f"cannot write {what} to {path}: {e.strerror or e}") from None
    return path


def _context(args) -> Context:
    """The run's budget and device, at ``--seed`` (0 where none is given: see :func:`_runs` for the claims' own)."""
    if args.seed is not None and args.seed < 0:
        raise UsageError("--seed must be a non-negative integer")
    return Context(seed=args.seed or 0, budget=args.budget, device=resolve_device(args.device))


def _runs(args, claims) -> tuple[Context, "Context | dict[str, Context]"]:
    """The base context and what each claim runs at: ``--seed S`` (a development seed, the same for every claim), or
    by default each claim at its first confirmation seed, derived from its code (``verify.calibrate``), so the draw a
    reader sees is the first of the seeds its verdict of record is measured at."""
    from dataclasses import replace

    ctx = _context(args)
    if args.seed is not None:
        return ctx, ctx
    from verify import calibrate

    seeds = calibrate.first_confirmation_seeds(claims, ctx.budget)
    return ctx, {c.id: replace(ctx, seed=seeds[c.id]) for c in claims}


def _seed_of(runs: "Context | dict[str, Context]", claim_id: str) -> int:
    """The seed claim ``claim_id`` runs at, from what :func:`_runs` returned."""
    return (runs[claim_id] if isinstance(runs, dict) else runs).seed


def _executor(args):
    from verify.execution import Executor

    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be at least 1")
    return Executor(workers=args.workers, scheduler=args.scheduler)


def run_claims(claims, ctx: Context, results_dir: Path, reuse: bool = False, kinds=None, args=None,
               rerun: bool = False, write_records: bool = True) -> list[dict]:
    """Run (or, with ``reuse``, load unchanged stored results for) ``claims`` on the executor ``args`` asks for."""
    from verify.execution import Executor, execute

    executor = _executor(args) if args is not None else Executor(workers=1)
    with executor:
        records, counts = execute(claims, ctx, results_dir, executor, reuse_records=reuse, rerun=rerun, kinds=kinds,
                                  write_records=write_records)
    if counts["reused"] or counts["failed"]:
        print(f"units: {counts['ran']} ran, {counts['reused']} reused from an earlier run, {counts['failed']} failed",
              file=sys.stderr)
    return records


def _print_table(records: list[dict], development: bool = False, results_dir: Path | None = None) -> None:
    """One line per claim under a header (this run's verdict, the verdict of record and its class), then the totals;
    a violation says whether it is the reviewed finding."""
    from collections import Counter

    from verify import calibrate, expectations, record

    if not records:
        return
    budgets = {r["budget"] for r in records}
    summaries = {b: calibrate.load_summary(results_dir or DEFAULT_RESULTS, b) for b in budgets}
    seeds = {r["claim"]["id"]: (None if development else r["seed"]) for r in records}
    standing = {s["id"]: s for s in record.standings(records, summaries, first_seeds=seeds)}
    w = max([len(r["claim"]["id"]) for r in records] + [5])
    print(f"{'claim':<{w}}  {'this run':<13} {'class (verdict of record)':<28} {'fidelity':<13} {'controls':<13} title")
    for r in records:
        ctl = r["controls"]
        rej = sum(c["rejected"] for c in ctl)
        controls = f"{rej}/{len(ctl)} rejected" if ctl else "—"
        print(f"{r['claim']['id']:<{w}}  {r['verdict']:<13} {standing[r['claim']['id']]['class']:<28} "
              f"{r['claim']['fidelity']:<13} {controls:<13} {r['claim']['title']}")
    counts = Counter(r["verdict"] for r in records)
    classes = record.class_counts([s["class"] for s in standing.values()])
    print(f"{len(records)} claims: " + ", ".join(f"{k} {c}" for c, k in classes.items() if k))
    print(("this run (a development seed, the same for every claim): " if development else
           "this run (each claim at its first confirmation seed; one draw): ")
          + ", ".join(f"{counts[v]} {v}" for v in ("verified", "violated", "inconclusive", "not checked") if counts[v]))
    for r in records:
        s = standing[r["claim"]["id"]]
        if s["class"] in ("verified over the range", "not checked"):
            continue
        print(f"  {r['claim']['id']}: {s['class']}: {s['record']['text']}" + (f"; {s['why']}" if s["why"] else ""))
    for r in records:  # a violation is a finding: say it loudly, and whether it is the one already reviewed
        if r["verdict"] != "violated":
            continue
        try:
            exp = expectations.expected(r["claim"]["id"], r["budget"], r["seed"])
        except KeyError:
            exp = None
        if exp is not None and exp.verdict == "violated" and exp.diagnosis:
            print(f"violated {r['claim']['id']}: the reviewed finding (its notes file): {r['reason']}")
        elif exp is not None and exp.absorbs("violated"):
            print(f"violated {r['claim']['id']}: a measured seed dependence (its notes file: "
                  f"{exp.unstable}): {r['reason']}")
        else:
            print(f"!!! VIOLATED {r['claim']['id']} (not a reviewed finding): {r['reason']}")


def cmd_list(args) -> int:
    from verify import registry

    entries = registry.index()  # no claim module imported while the code is unchanged
    if args.k:
        ids = set(registry.select_ids(args.k))
        entries = [e for e in entries if e["id"] in ids]
    if args.published:
        return _list_published(entries)
    for e in entries:
        kinds = ",".join(e["kinds"]) or "-"
        extra = f"  [not checked: {e['not_checked']}]" if e["not_checked"] else ""
        print(f"{e['id']:<10} {e['fidelity']:<13} {kinds:<24} {e['title']}{extra}")
    return 0


#: what ``verify list --published`` says of a published row: it measures the claim's code (``current``), was carried
#: forward to it (``carried``), measures older code (``older``), or there is none (``missing``)
PUBLISHED_STATES = ("current", "carried", "older", "missing")


def published_state(claim_id: str, row: dict | None, code_hash: str, carried: dict, budget: str,
                    basis: str | None = None) -> str:
    """One of :data:`PUBLISHED_STATES` for a published calibration or map row of ``claim_id`` at ``budget``
    (``None``: none);
    ``basis``: the claim's seed basis now, for a calibration row (its seeds are the confirmation seeds of the basis it
    records: a row of unchanged code whose fixture mate changed is of older seeds unless carried)."""
    from verify import published

    return "missing" if row is None else published.row_state(claim_id, row, code_hash, carried, basis, budget)


def _list_published(entries) -> int:
    """Per claim, whether its published quick and standard calibrations and its standard map measure its code now,
    then the counts and the commands that bring the rest up to date (what a re-publication has left to do)."""
    from verify import calibrate, published, registry

    store, hashes = published.load(), registry.code_hashes()
    bases = calibrate.seed_bases([e["id"] for e in entries if not e["not_checked"]])
    calib = {b: {c["id"]: c for c in (store["calibration"].get(b) or {}).get("claims", [])}
             for b in ("quick", "standard")}
    maps = store["maps"].get("standard", {})
    claims = {c.id: c for c in registry.all_claims()}
    columns = ("quick calibration", "standard calibration", "standard map")
    print(f"{'claim':<10} {columns[0]:<19} {columns[1]:<22} {columns[2]}")
    left = {c: [] for c in columns}
    eligible = {c: 0 for c in columns}  # the claims a column applies to (checked; the map: with free choices)
    for e in entries:
        cid = e["id"]
        if e["not_checked"]:
            print(f"{cid:<10} not checked")
            continue
        states = [published_state(cid, calib[b].get(cid), hashes[cid], store["carried"], b, bases[cid]) for b in calib]
        has_map = bool(claims[cid].free_choices)
        states.append(published_state(cid, maps.get(cid), hashes[cid], store["carried"], "standard") if has_map
                      else "-")
        for col, st in zip(columns, states):
            eligible[col] += st != "-"
            if st in ("older", "missing"):
                left[col].append(cid)
        print(f"{cid:<10} {states[0]:<19} {states[1]:<22} {states[2]}")
    commands = {columns[0]: "verify calibrate --budget quick --publish",
                columns[1]: "verify calibrate --budget standard --publish",
                columns[2]: "verify sensitivity --budget standard --publish"}
    everything = len(entries) == len(claims)  # no -k: a column whose every claim is left needs no selection
    for col, ids in left.items():
        if ids:
            picked = "" if everything and len(ids) == eligible[col] else " " + " ".join(f"-k {i}" for i in ids)
            print(f"{col}: {len(ids)} of {eligible[col]} to publish: {commands[col]}{picked}")
        else:
            print(f"{col}: every row measures the current code")
    return 0


def cmd_run(args) -> int:
    from verify import registry

    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be at least 1")
    # --device cuda is checked by running (it must say when there is no such device)
    records = None if args.rerun or args.device == "cuda" else _stored_and_current(args)
    if records is not None:  # nothing to compute: neither torch nor a claim module is imported
        results_dir = Path(args.results)
        print("units: 0 ran; every record was stored by an earlier run of this code", file=sys.stderr)
    else:
        _compute_setup()
        if _executor(args).local_cluster:
            from verify.execution import start_worker_server

            start_worker_server()  # its imports run while this process imports the claims
        claims = registry.select(args.k)
        _, runs = _runs(args, claims)
        results_dir = ensure_writable_dir(args.results, "results")
        records = run_claims(claims, runs, results_dir, args=args, rerun=args.rerun)
    _print_table(records, development=args.seed is not None, results_dir=results_dir)
    from verify.report import headline

    w = max(len(r["claim"]["id"]) for r in records)
    print("headlines:")
    for r in records:
        print(f"  {r['claim']['id']:<{w}}  {headline(r)}")
    print(f"records: {results_dir}/<id>.json (`verify show ID` prints one claim's evidence)")
    return 0


def cmd_report(args) -> int:
    from verify import registry, report

    out = Path(args.out)
    ensure_writable_dir(out.parent if str(out.parent) else Path("."), "the report")
    if out.exists() and out.is_dir():
        raise UsageError(f"--out {out} is a directory; give a file path such as {out / 'report.html'}")
    claims = registry.select(args.k)
    ctx, runs = _runs(args, claims)
    from verify import calibrate, execution, sensitivity

    draws_maps = ctx.budget in sensitivity.REPORT_BUDGETS and not args.no_sensitivity  # quick skips them
    stored = {} if args.rerun else execution.reusable_records(claims, runs, args.results)
    if len(stored) == len(claims) and not draws_maps:  # only reads the results: they may be read-only (an archive)
        results_dir = Path(args.results)
    else:
        results_dir = ensure_writable_dir(args.results, "results")
    records = run_claims(claims, runs, results_dir, reuse=not args.rerun, args=args, rerun=args.rerun)

    if draws_maps:
        with _executor(args) as executor:
            maps = sensitivity.run(claims, runs, results_dir, executor, rerun=args.rerun)
    else:  # maps a `verify sensitivity` of this run stored, else the published ones (of older code, flagged)
        hashes = {c.id: registry.code_hash(c) for c in claims if c.free_choices}
        maps = [m for cid, h in hashes.items()
                for m in [sensitivity.read(results_dir, cid, budget=ctx.budget, seed=_seed_of(runs, cid),
                                           code_hash=h)] if m]
        have = {m["claim"] for m in maps}
        maps += sensitivity.published_maps({cid: h for cid, h in hashes.items() if cid not in have},
                                           older=True).values()
    report.write_report(out, records, ctx, command=" ".join(["verify"] + sys.argv[1:]),
                        calibration=calibrate.load_summary(results_dir, ctx.budget),
                        sensitivity={m["claim"]: m for m in maps}, development=args.seed is not None)
    _print_table(records, development=args.seed is not None, results_dir=results_dir)
    if args.figures:
        figs = report.write_figures(out.parent / f"{out.stem}-figures", records)
        print(f"{len(figs)} figures written to {out.parent / (out.stem + '-figures')}/ (one SVG each)")
    print(f"report written to {out}")
    return 0


def cmd_readme(args) -> int:
    """Rewrite the generated claims table, its results at a glance and the findings (docs/claims.md) from
    stored records (all claims, fresh), the published calibrations and the published maps."""
    from verify import readme, record, registry, results

    stored = {r["claim"]["id"]: r for r in results.read_records(args.results)}
    records, missing, stale = [], [], []
    claims = list(registry.all_claims())
    for c in claims:
        r = stored.get(c.id)
        if r is None and c.not_checked:  # nothing runs for these: their record is the reason
            from theorems.claim import Context
            from verify import runner

            r = runner.run_claim(c, Context())
        if r is None:
            missing.append(c.id)
        elif r["code_hash"] != registry.code_hash(c) or r["kinds"] != "all":
            stale.append(c.id)
        else:
            records.append(r)
    if missing or stale:
        raise UsageError(f"records in {args.results} are missing ({', '.join(missing) or 'none'}) or stale "
                         f"({', '.join(stale) or 'none'}); run `verify run --results {args.results}` first")
    shared = {"maps": record.shown_maps(records), "calibrations": readme.load_calibrations(),
              "first_seeds": record.first_seeds_of(records)}
    text, changed = readme.update(args.readme, records, **shared)
    crashed = raised_parts(records)
    if args.check and crashed:  # a crash makes its claim inconclusive, which a measured seed dependence may absorb
        print("verify: checks or controls raised instead of deciding (a defect, never a verdict): "
              + "; ".join(crashed), file=sys.stderr)
        return 1
    if args.check:  # verdicts exactly; headline values within their reproducibility tolerance
        now, then = readme.verdicts(text), readme.verdicts(Path(args.readme).read_text())
        glance_now, glance_then = readme.glance_text(text), readme.glance_text(Path(args.readme).read_text())
        differ = []
        if now != then:
            differ.append("its claims table (" + ", ".join(
                f"{k}: {then.get(k, 'absent')} -> {now.get(k, 'absent')}"
                for k in sorted(set(now) | set(then)) if now.get(k) != then.get(k)) + ")")
        if glance_now != glance_then:
            differ.append("its results at a glance")
        moved = readme.moved(Path(args.readme).read_text(), text)  # one line per row, beyond its tolerance
        if moved:
            differ.append("its headline values")
        if differ:
            print(f"verify: {args.readme} differs from the records in {' and '.join(differ)}; run `verify readme`",
                  *moved, sep="\n  ", file=sys.stderr)
            return 1
        across = ("" if readme.same_arithmetic(Path(args.readme).read_text(), text) else
                  " (its values were written on a machine with other float64 arithmetic: compared within the "
                  "tolerance across machines)")
        print(f"{args.readme}'s claims table, headline values and results at a glance match the records{across}")
        return 0
    if changed:
        from verify.results import atomic_write_text

        atomic_write_text(Path(args.readme), text)
    print(f"{args.readme}: {'rewritten' if changed else 'already up to date'} from {len(records)} records")
    return 0


def cmd_calibrate(args) -> int:
    """Run the claims at their confirmation seeds (or at development seeds); print and store their operating
    characteristics."""
    from verify import calibrate, published, registry

    n = calibrate.CONFIRMATION_SEEDS[args.budget] if args.seeds is None else args.seeds
    if n < 1:
        raise UsageError("--seeds must be at least 1")
    if args.first_seed is not None and args.first_seed < 0:
        raise UsageError("--first-seed must be a non-negative integer")
    if args.publish and args.first_seed is not None:
        raise UsageError("--publish takes confirmation seeds only (derived from the code): drop --first-seed")
    claims = [c for c in registry.select(args.k) if c.checks]
    if not claims:
        raise UsageError(f"no checked claim matches -k {' -k '.join(args.k or [])}")
    results_dir = ensure_writable_dir(args.results, "results")
    plan = ({"confirmations": n} if args.first_seed is None
            else {"seeds": list(range(args.first_seed, args.first_seed + n))})

    def said(label, counts):
        print(f"{label}: units {counts['ran']} ran, {counts['reused']} reused, {counts['failed']} failed",
              file=sys.stderr)

    done: dict = {}

    def said_and_kept(label, counts):
        said(label, counts)
        try:
            done.update(json.loads(calibrate.summary_path(results_dir, args.budget).read_text()))
        except (OSError, ValueError):
            pass

    try:
        with _executor(args) as executor:
            summary = calibrate.calibrate(claims, args.budget, results_dir, executor,
                                          device=resolve_device(args.device), on_seed=said_and_kept, **plan)
    except KeyboardInterrupt:  # a look at some confirmation seeds leaves its trace too
        if done:
            calibrate.log_run(done, published_too=False, interrupted=True)
        raise
    print("\n".join(calibrate.table(summary)))
    print(f"calibration written to {calibrate.summary_path(results_dir, args.budget)}")
    if args.publish:
        print(f"published to {calibrate.publish(summary, [c.id for c in registry.all_claims()])}")
    calibrate.log_run(summary, published_too=args.publish)
    print(f"logged to {published.path()} (the confirmation log)")
    return 0


def cmd_sensitivity(args) -> int:
    """Each selected claim's verdict over a design of its free choices; print the maps' headlines, store them and log
    the run."""
    from verify import published, registry, sensitivity

    if args.points is not None and args.points < 2:
        raise UsageError("--points must be at least 2 (both ends of each range)")
    claims = sensitivity.mapped(registry.select(args.k))
    if not claims:
        raise UsageError(f"no claim with free choices matches -k {' -k '.join(args.k or [])}" if args.k
                         else "no claim declares free choices")
    if args.publish and args.seed is not None:
        raise UsageError("--publish takes maps at each claim's first confirmation seed (derived from its code): drop "
                         "--seed")
    points = sensitivity.POINTS[args.budget] if args.points is None else args.points
    for c in claims:  # before anything runs
        try:
            sensitivity.check_design_size(c, args.budget, points)
        except sensitivity.DesignTooLarge as e:
            raise UsageError(str(e)) from None
    ctx, runs = _runs(args, claims)
    results_dir = ensure_writable_dir(args.results, "results")
    confirmation = args.seed is None
    try:
        with _executor(args) as executor:
            maps = sensitivity.run(claims, runs, results_dir, executor, points=points, rerun=args.rerun)
    except KeyboardInterrupt:  # a look at the confirmation seeds leaves its trace even when it stops early
        sensitivity.log_run([], ctx.budget, confirmation=confirmation, published_too=False,
                            selected={c.id: {"code_hash": registry.code_hash(c), "seed": _seed_of(runs, c.id)}
                                      for c in claims})
        raise
    w = max(len(m["claim"]) for m in maps)
    for m in maps:
        print(f"{m['claim']:<{w}}  {m['headline']}")
    print(f"maps written to {results_dir / sensitivity.SENSITIVITY}")
    if args.publish:
        print(f"published to {sensitivity.publish(maps, ctx.budget)}")
    sensitivity.log_run(maps, ctx.budget, confirmation=confirmation, published_too=args.publish)
    print(f"logged to {published.path()} (the confirmation log)")
    return 0


def cmd_show(args) -> int:
    """One claim's evidence: its stored record (run now, at its first confirmation seed, when none is stored)."""
    from verify import registry, results, sensitivity, show

    claim_id = registry.canonical_id(args.claim)
    results_dir = Path(args.results)
    rec = _stored_record(results_dir, claim_id)
    # a current stored record is shown without importing the claim (and torch): its code hash is read off the index
    if rec is None or rec["code_hash"] != registry.code_hash_by_id(claim_id) or rec["budget"] != args.budget \
            or (args.seed is not None and rec.get("seed") != args.seed):
        _compute_setup()
        claim = registry.get(claim_id)
        _, runs = _runs(args, [claim])
        (rec,) = run_claims([claim], runs, ensure_writable_dir(results_dir, "results"), reuse=True, args=args)
    maps = sensitivity.published_maps({claim_id: rec["code_hash"]}, older=True)
    v = show.view(rec, show.standing_of(rec, results_dir, maps), maps.get(claim_id),
                  results.record_path(results_dir, claim_id))
    print(json.dumps(v, indent=1, default=str) if args.json else "\n".join(show.text(v)))
    return 0


def _stored_and_current(args) -> list[dict] | None:
    """The selected claims' stored records when every one is what a run would reuse as it is (this code, seed, budget,
    every kind, no failed unit), read by id off the index; else None."""
    from verify import calibrate, registry
    from verify.execution import _has_failed_units

    ids = registry.select_ids(args.k) if args.k else [e["id"] for e in registry.index()]
    seeds = {cid: args.seed for cid in ids} if args.seed is not None else calibrate.first_confirmation_seeds(
        ids, args.budget)
    hashes, out = registry.code_hashes(), []
    for cid in ids:
        r = _stored_record(Path(args.results), cid)
        if (r is None or r.get("seed") != seeds[cid] or r.get("budget") != args.budget or r.get("kinds") != "all"
                or r.get("code_hash") != hashes[cid] or _has_failed_units(r)):
            return None
        out.append(r)
    return out


def _stored_record(results_dir: Path, claim_id: str) -> dict | None:
    """The claim's stored record, or None (none there, or a file that is not one)."""
    from verify import results

    try:
        rec = json.loads(results.record_path(results_dir, claim_id).read_text())
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) and (rec.get("claim") or {}).get("id") == claim_id else None


def cmd_diff(args) -> int:
    """What differs between two runs' records (verdicts, decisions, measured values, seeds, code, machine)."""
    from verify import show

    for d in (args.a, args.b):
        if not Path(d).is_dir():
            raise UsageError(f"{d} is not a results directory")
    if args.tolerance < 0:
        raise UsageError("--tolerance must be non-negative")
    rows = show.diff(show.records(Path(args.a)), show.records(Path(args.b)), args.tolerance)
    print(json.dumps(rows, indent=1, default=str) if args.json else "\n".join(
        show.diff_text(rows, Path(args.a), Path(args.b), args.tolerance)))
    return 1 if rows else 0


def raised_parts(records) -> list[str]:
    """``"<claim> <check or control>: <error>"`` for each check and control of ``records`` that raised."""
    out = []
    for r in records:
        for part in ("checks", "controls"):
            for x in r.get(part, []):
                details = x.get("details") or {}
                if details.get("raised"):
                    first_line = (details.get("error") or "").partition("\n")[0]  # an empty error has no lines
                    out.append(f"{r['claim']['id']} {part[:-1]} {x['name']!r}: {first_line}")
    return out


def cmd_carry(args) -> int:
    """Carry published calibrations and maps forward to changed code whose canary records are identical."""
    from verify import carry, published, registry

    claims = [c for c in registry.select(args.k) if c.checks]
    if not claims:
        raise UsageError(f"no checked claim matches -k {' -k '.join(args.k or [])}")
    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be at least 1")
    workdir = ensure_writable_dir(args.results / "canary", "the canary runs")
    if args.rows and args.budget != carry.CANARY_BUDGET:
        raise UsageError("give --rows (one budget's rows, its canary) or --budget standard (every row), not both")
    if args.rows:  # the rows of one budget only: the canary runs there, and only there
        budgets, only = (args.rows,), (args.rows,)
    else:
        budgets, only = (carry.CANARY_BUDGET,) + (("standard",) if args.budget == "standard" else ()), None
    rows = carry.carry(args.rev, claims, workdir=workdir, budgets=budgets, workers=args.workers or 1, rows=only)
    w = max(len(r["id"]) for r in rows)
    for r in rows:
        print(f"{r['id']:<{w}}  {r['status']:<12} {r.get('why', '')}")
    n = sum(r["status"] == "carried" for r in rows)
    print(f"{n} carried forward, {sum(r['status'] == 'differs' for r in rows)} differ (their published measurements "
          f"stay of older code); the store: {published.path()}")
    return 0


def cmd_probe(args) -> int:
    """Run probes; print each probe's cells; exit 1 if any finds a counterexample."""
    from verify import registry

    if args.all == bool(args.claim):
        raise UsageError("give one CLAIM or --all")
    claims = [c for c in registry.all_claims() if any(ch.kind == "probe" for ch in c.checks)] if args.all \
        else [registry.get(args.claim)]
    if not args.all and not any(c.kind == "probe" for c in claims[0].checks):
        raise UsageError(f"claim {claims[0].id} has no probe")
    if args.max_examples is not None and args.max_examples < 1:
        raise UsageError("--max-examples must be at least 1")
    seed = 0 if args.seed is None else args.seed  # a probe is a development tool: seed 0 unless told
    ctx = Context(seed=seed, budget=args.budget, device=resolve_device(args.device),
                  max_examples=args.max_examples)
    found = []
    results_dir = ensure_writable_dir(args.results, "results")
    records = run_claims(claims, ctx, results_dir, kinds={"probe"}, args=args, write_records=False)
    asked_by = "--max-examples" if args.max_examples else f"the probe's count at {args.budget}"
    for claim, rec in zip(claims, records):
        for c in rec["checks"] + rec["controls"]:
            if c["kind"] == "control":
                print(f"{claim.id} control '{c['name']}': {_control_verdict(c)}")
            else:
                print(f"{claim.id} {c['name']}: {c['status']}: {c['summary']}")
            if "examples_evaluated" in c["details"]:
                print(f"    {_probe_counts(c['details'], asked_by)}")
            if c["kind"] == "control":
                continue
            for cell, count in sorted(c["details"].get("cells", {}).items()):
                print(f"    {count:5d}  {cell}")
            cx = c["details"].get("counterexample")
            if cx:
                found.append(claim.id)
                print(f"  !!! COUNTEREXAMPLE to {claim.id} (shrunk; replay with --seed {seed}): {cx}")
    if found:
        print(f"verify: counterexamples found for {', '.join(found)}", file=sys.stderr)
    return 1 if found else 0


def _control_verdict(entry: dict) -> str:
    """A probe control's line: its probe must find a counterexample (the mutant is false), so a failed probe is the
    control rejected, as it must be, and a passed one is the alarm (a probe that cannot fail proves nothing)."""
    summary = entry["summary"]
    if summary.startswith("COUNTEREXAMPLE"):  # the shout belongs to a counterexample to the claim, not its mutant
        summary = "counterexample" + summary[len("COUNTEREXAMPLE"):]
    if entry["rejected"]:
        return f"rejected (as it must be): {summary}"
    return f"NOT REJECTED ({entry['status']}: the probe cannot tell this mutant from the claim): {summary}"


def _probe_counts(details: dict, asked_by: str) -> str:
    """How many examples a probe was asked for and how many it ran, and why they differ (``theorems.probe``): a
    round that decided too few instances draws another; hypothesis stops drawing at the first counterexample and,
    for a check, then runs variants of it while shrinking it (every run is counted; a control does not shrink); it
    stops early when the strategy has no new example to draw."""
    asked, ran, rounds = details["max_examples"], details["examples_evaluated"], details.get("rounds", 1)
    text = f"{asked} examples asked ({asked_by}); {ran} run"
    why = []
    if rounds > 1:
        why.append(f"{rounds} rounds of up to {asked}, as a round that decided fewer than {details['min_decided']} "
                   "instances draws another")
    if details.get("counterexample"):
        if not details["counterexample"].get("shrunk", True):
            why.append("drawing stops at the first counterexample (not shrunk: the outcome is its decision alone)")
        elif ran != asked * rounds:
            why.append("drawing stops at a counterexample; shrinking it ran the rest")
    elif ran < asked * rounds:
        why.append("hypothesis found no further distinct example to draw")
    elif ran > asked * rounds:
        why.append("hypothesis replayed examples (its example database, or a failure it shrank)")
    return text + (": " + "; ".join(why) if why else "")


def cmd_new(args) -> int:
    """Write a new claim (a worked template module), its ledger, its expectation and the README's counts."""
    from verify import scaffold

    try:
        made = scaffold.create(args.claim, title=args.title)
    except scaffold.ScaffoldError as e:
        raise UsageError(str(e)) from None
    print(scaffold.summary(made))
    return 0


EPILOG = """\
examples:
  verify list                                   the claims, their fidelity and evidence kinds
  verify run -k A.T4                            one claim at the quick budget, seed 0
  verify report --budget standard --workers 2   the HTML report (reports/report.html) with sensitivity maps
  verify probe B.T7 --max-examples 500          a property-based probe, its cells and any counterexample
  verify sensitivity -k B.Fig2                  one claim's verdict over its free choices

exit status: 0 done (a violated claim is a finding, not an error); 1 `readme --check` differs, or a probe found a
counterexample; 2 bad input (one line on stderr); 130 interrupted (finished units are kept: run again to resume).
docs: docs/running.md (scale, Dask, resume), docs/concepts.md (claims, checks, controls, verdicts)."""


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="verify", description=__doc__.splitlines()[0], epilog=EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser, metavar="COMMAND")

    def parser(name, help):
        return sub.add_parser(name, help=help, description=help, formatter_class=_DefaultsShown)

    def common(sp, k=True, seed=True):
        if k:
            sp.add_argument("-k", metavar="PATTERN", action="append",
                            help="claims whose id or title matches (substring or glob); repeat for several; default: all")
        sp.add_argument("--budget", choices=BUDGETS, default="quick",
                        help="sample sizes and horizons: quick (CI, minutes), standard (about an hour on 2 cores), full")
        if seed:
            sp.add_argument("--seed", type=int, default=None,
                            help="a development seed for every claim (default: each claim's first confirmation seed, "
                                 "derived from its code; every check derives its streams from the seed)")
        sp.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                        help="where torch computes; auto: a CUDA device if there is one")
        sp.add_argument("--workers", type=int, default=None,
                        help="worker processes of a local Dask cluster (default: the number of cores; 1: in-process)")
        sp.add_argument("--scheduler", metavar="ADDRESS", default=None,
                        help="run the units on an existing Dask scheduler (tcp://host:8786) instead; checked before "
                             "anything runs")

    s = parser("list", "list the registered claims (id, fidelity, evidence kinds, title)")
    s.add_argument("-k", metavar="PATTERN", action="append", help="claims whose id or title matches; default: all")
    s.add_argument("--published", action="store_true", help="instead: whether each claim's published calibrations "
                   "(quick, standard) and standard map measure its current code, and the commands for the rest")
    s.set_defaults(fn=cmd_list)
    s = parser("run", "run claims and write one results record each")
    common(s)
    s.add_argument("--results", type=Path, default=DEFAULT_RESULTS, help="results directory (created if missing)")
    s.add_argument("--rerun", action="store_true", help="ignore units stored by an earlier run (no resume)")
    s.set_defaults(fn=cmd_run)
    s = parser("report", "write the HTML verification report (runs what is missing or stale)")
    common(s)
    s.add_argument("--out", type=Path, default=DEFAULT_REPORT,
                   help="the HTML file; its directory is created if missing; the JSON bundle goes beside it")
    s.add_argument("--results", type=Path, default=DEFAULT_RESULTS, help="results directory (created if missing)")
    s.add_argument("--rerun", action="store_true", help="ignore stored results")
    s.add_argument("--figures", action="store_true", help="also write every figure as an SVG file, in "
                   "<report>-figures/<claim>/ beside the report")
    s.add_argument("--no-sensitivity", action="store_true", help="skip the sensitivity maps the standard and full "
                   "reports draw (maps already stored for this run are still shown)")
    s.set_defaults(fn=cmd_report)
    s = parser("readme", "rewrite the claims table and its results at a glance (docs/claims.md) from stored records, "
               "the published calibrations and maps")
    s.add_argument("--results", type=Path, default=DEFAULT_RESULTS, help="where the records are")
    s.add_argument("--readme", type=Path, default=Path("docs/claims.md"),
                   help="the page holding the generated claims table (between its markers)")
    s.add_argument("--check", action="store_true", help="exit 1 if the table's classes and verdicts, or the results "
                   "at a glance, differ from the records")
    s.set_defaults(fn=cmd_readme)
    s = parser("calibrate", "operating characteristics: every check and control over N seeds")
    common(s, seed=False)
    s.add_argument("--seeds", type=int, default=None, help="how many seeds per claim (default: the published "
                   "count, 20 at quick and 5 at standard)")
    s.add_argument("--first-seed", type=int, default=None, help="development: every claim at the consecutive seeds "
                   "S, S+1, ... (never published); default: each claim at the confirmation seeds its code hash derives")
    s.add_argument("--results", type=Path, default=DEFAULT_RESULTS, help="results directory (calibration/ inside)")
    s.add_argument("--publish", action="store_true", help="also write the summary to verify/published.json (the "
                   "calibration a fresh clone's report shows; commit it after review)")
    s.set_defaults(fn=cmd_calibrate)
    s = parser("sensitivity", "each claim's verdict over a design of its free choices (a map per claim)")
    common(s)
    s.add_argument("--points", type=int, default=None, help="values per free choice, range ends included (default: "
                   "2 at quick, 3 at standard, 5 at full; a design larger than the budget allows is refused)")
    s.add_argument("--results", type=Path, default=DEFAULT_RESULTS, help="results directory (sensitivity/ inside)")
    s.add_argument("--rerun", action="store_true", help="ignore units stored by an earlier run (no resume)")
    s.add_argument("--publish", action="store_true", help="also merge the maps into verify/published.json "
                   "(the README's 'holds at N of M' column; commit it after review)")
    s.set_defaults(fn=cmd_sensitivity)
    s = parser("show", "one claim's evidence: class, verdict of record, headline, every decision, controls, findings, "
                       "free-choice map, scope filters")
    s.add_argument("claim", metavar="ID", help="the claim id (verify list)")
    s.add_argument("--results", type=Path, default=DEFAULT_RESULTS, help="where its record is (run if missing)")
    s.add_argument("--json", action="store_true", help="print the same as JSON")
    common(s, k=False)
    s.set_defaults(fn=cmd_show)
    s = parser("diff", "what differs between two runs' records (verdicts, decisions, measured values, seeds, code, "
                       "machine); exit 1 when anything does")
    s.add_argument("a", metavar="RUN_A", type=Path, help="a results directory")
    s.add_argument("b", metavar="RUN_B", type=Path, help="another results directory")
    s.add_argument("--tolerance", type=float, default=1e-9,
                   help="relative tolerance for measured values and interval ends")
    s.add_argument("--json", action="store_true", help="print the differences as JSON")
    s.set_defaults(fn=cmd_diff)
    s = parser("carry", "carry published calibrations and maps forward to changed code that gives identical records "
                        "at the canary seeds")
    s.add_argument("--from", dest="rev", required=True, metavar="REV",
                   help="a git revision at which the published measurements are current (their code)")
    s.add_argument("-k", metavar="PATTERN", action="append", help="claims whose id or title matches; default: all")
    s.add_argument("--budget", choices=("quick", "standard"), default="quick",
                   help="quick: the canary at the quick budget; standard: also at the standard budget (slower)")
    s.add_argument("--rows", choices=("quick", "standard"), default=None,
                   help="carry only this budget's calibration rows and maps, with the canary at that budget alone (a "
                        "change that moved numbers at the other budget only); the other budget's rows stay of older "
                        "code until re-run")
    s.add_argument("--workers", type=int, default=None, help="worker processes per canary run (default: 1)")
    s.add_argument("--results", type=Path, default=DEFAULT_RESULTS, help="results directory (canary/ inside)")
    s.set_defaults(fn=cmd_carry)
    s = parser("probe", "run property-based probes (one claim or --all): their cells and any counterexample")
    s.add_argument("claim", nargs="?", help="the claim id (verify list shows which have a probe)")
    s.add_argument("--all", action="store_true", help="every claim that has a probe")
    s.add_argument("--max-examples", type=int, default=None,
                   help="examples per probe (default: the probe's own count at the budget)")
    s.add_argument("--results", type=Path, default=DEFAULT_RESULTS, help="where finished units are kept (resume)")
    common(s, k=False)
    s.set_defaults(fn=cmd_probe)
    s = parser("new", "add a claim: a worked template module, its ledger, its expectation (docs/adding-a-claim.md)")
    s.add_argument("claim", metavar="ID", help="the new claim's id: the paper's letter, a dot, a kind and a number "
                   "(A.L24; a new letter starts a new paper)")
    s.add_argument("--title", default=None, help="the claim's title (default: the template lemma's)")
    s.set_defaults(fn=cmd_new)
    return p


def check_scheduler(address: str, timeout: float = 5.0) -> None:
    """Refuse an unreachable ``--scheduler`` before anything else, even when every unit is stored: a malformed
    address, or no TCP listener there within ``timeout`` seconds (a refused connection fails at once)."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if parts.scheme not in ("tcp", "tls") or not host or not port:
        raise UsageError(f"--scheduler {address}: not an address like tcp://host:8786")
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as e:
        raise UsageError(f"cannot reach the Dask scheduler at {address}: {e.strerror or e}") from None
    handshake(address)


def handshake(address: str, timeout: float = 20.0) -> None:
    """Ask the service at ``address`` for what a Dask scheduler answers (its identity): another service on that port
    (a web server, a database, a silent socket) is refused here instead of hanging the run.  The question is asked by
    a child process killed after ``timeout`` seconds, since a connection that never completes its handshake can block
    the Dask client past any timeout it is given."""
    import subprocess

    code = ("import sys, logging; logging.disable(logging.CRITICAL); from distributed import Client; "
            "c = Client(sys.argv[1], timeout='10s', set_as_default=False); c.scheduler_info(); c.close(); print('ok')")
    try:
        out = subprocess.run([sys.executable, "-c", code, address], capture_output=True, text=True, timeout=timeout)
        ok = out.returncode == 0 and out.stdout.strip().endswith("ok")
    except subprocess.TimeoutExpired:
        ok = False
    if not ok:
        raise UsageError(f"{address} did not answer as a Dask scheduler within {timeout:g} s")


def _compute_setup() -> None:
    """What a command that computes needs before it imports the claims: torch single-threaded (the checks are batched
    small-tensor work: intra-op threads only add contention; ``VERIFY_TORCH_THREADS`` overrides) and the opt-in memory
    tuning (``VERIFY_TUNE_MEMORY``).  Parsing the arguments needs neither, so ``--help`` and bad input stay fast."""
    import torch

    torch.set_num_threads(int(os.environ.get("VERIFY_TORCH_THREADS", "1")))
    from verify import memory_tuning

    memory_tuning.tune_process()


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _terminated)  # SIGTERM ends a run like Ctrl-C: clean shutdown, finished units kept
    args = restore_environment = None
    try:
        args = build_parser().parse_args(argv)
        restore_environment = _example_database_for(args.fn)  # before any worker starts: they inherit it
        if getattr(args, "k", None):  # a mistyped claim id is bad input: said before anything heavy is imported
            from verify import registry

            registry.select_ids(args.k)
        if args.fn not in (cmd_diff, cmd_new, cmd_list, cmd_show, cmd_run):  # run and show: only when they compute
            _compute_setup()
        if getattr(args, "scheduler", None):
            check_scheduler(args.scheduler)
        if hasattr(args, "scheduler") and args.fn not in (cmd_show, cmd_run) and _executor(args).local_cluster:
            from verify.execution import start_worker_server

            start_worker_server()  # its imports run while this process imports the claims
        if os.environ.get("VERIFY_DATA_DIR") and args.fn in (cmd_run, cmd_report, cmd_calibrate, cmd_sensitivity):
            _check_data_dir()
        return args.fn(args)
    except UsageError as e:
        print(f"verify: error: {e}", file=sys.stderr)
        return 2
    except LookupError as e:  # unknown claim ids
        print(f"verify: error: {e.args[0] if e.args else e}", file=sys.stderr)
        return 2
    except ValueError as e:  # bad input caught deeper (e.g. a non-positive-definite covariance)
        print(f"verify: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        _interrupted(args, quiet_exit=argv is None)  # a caller's own process (a test) keeps its stderr
        return 130
    except BrokenPipeError:  # `verify list | head`: the reader left; end quietly, as other Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    finally:
        if restore_environment is not None:
            restore_environment()


def _example_database_for(command) -> Callable[[], None]:
    """``verify probe`` replays what earlier probes found (a shared example database: ``theorems.probe``); every other
    command drops one set in the environment, so a record is a function of code, seed and budget alone.  Returns what
    puts the variable back (``main`` called in-process, by a test, must not leave it changed)."""
    from verify.results import SHARED_EXAMPLES

    before = os.environ.get(SHARED_EXAMPLES)
    if command is cmd_probe:
        from theorems.probe import DEFAULT_DB

        os.environ.setdefault(SHARED_EXAMPLES, DEFAULT_DB)
    else:
        os.environ.pop(SHARED_EXAMPLES, None)

    def restore() -> None:
        if before is None:
            os.environ.pop(SHARED_EXAMPLES, None)
        else:
            os.environ[SHARED_EXAMPLES] = before
    return restore


def _check_data_dir() -> None:
    """Read what ``VERIFY_DATA_DIR`` holds (MNIST / CIFAR-10 for paper B's vision figures at the full budget) before
    anything runs: a bad file is one line and exit 2 here, not a crashed check later."""
    from numerics.paper_b.vision import check_data_dir

    try:
        found = check_data_dir()
    except ValueError as e:
        raise UsageError(f"VERIFY_DATA_DIR: {e}") from None
    if not found:
        print(f"verify: VERIFY_DATA_DIR={os.environ['VERIFY_DATA_DIR']} holds neither MNIST nor CIFAR-10; the vision "
              "figures use the digits", file=sys.stderr)


def _terminated(signum, frame):
    raise KeyboardInterrupt


def _interrupted(args, quiet_exit: bool) -> None:
    """The one line an interrupt prints (the cluster is already stopped and its workers ignore SIGINT, so nothing
    else reaches stderr): what was kept, where, and how to resume.  A second Ctrl-C while it is said changes nothing;
    with ``quiet_exit`` nothing this process writes afterwards reaches stderr either."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    results = getattr(args, "results", None)
    if results is None or args.fn in (cmd_diff, cmd_readme):  # commands that store no units
        print("verify: interrupted", file=sys.stderr, flush=True)
    else:
        where = Path(results) / ("canary" if args.fn is cmd_carry else "units" if args.fn is not cmd_calibrate
                                 else "calibration")
        print(f"verify: interrupted; finished units are kept in {where}: run the same command again to resume",
              file=sys.stderr, flush=True)
    if quiet_exit:
        _quiet_exit()
    else:
        signal.signal(signal.SIGINT, previous)


def _quiet_exit() -> None:
    """Send what this process writes to stderr from here on (an interrupted cluster's start-up closed again at exit,
    Dask's exit hooks, a thread stopped mid-call) to /dev/null: the command has said all there is to say."""
    try:
        sys.stderr.flush()
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stderr.fileno())
    except (OSError, ValueError):  # no stderr to silence (closed, or not a file)
        pass


if __name__ == "__main__":
    sys.exit(main())
