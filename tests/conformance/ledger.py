"""Counting calls to a PVE API and the ones that answered as PVE does (used by
proxmoxer_ct.py): each call is checked by a function that raises `Disagreement`."""

import re

from proxmoxer import ResourceException


class Disagreement(AssertionError):
    """An answer PVE would not give."""


class Broken(Exception):
    """A call failed where PVE succeeds: the rest of this life cannot run."""


def expect(cond, what):
    if not cond:
        raise Disagreement(what)


def expect_eq(got, want, what):
    if got != want:
        raise Disagreement(f"{what}: got {got!r}, PVE gives {want!r}")


def expect_keys(obj, keys, what):
    expect(isinstance(obj, dict), f"{what}: not an object: {obj!r}")
    missing = sorted(k for k in keys if k not in obj)
    expect(not missing, f"{what}: missing {missing} in {sorted(obj)}")


class Ledger:
    """Counts calls and the ones that answered as PVE does."""

    def __init__(self):
        self.calls = 0
        self.agreed = 0
        self.disagreements = []

    def record(self, what, result, check):
        """Counts one answer as PVE's when `check` passes, else as a disagreement."""
        try:
            if check is not None:
                check(result)
        except Disagreement as e:
            self.disagreements.append(f"{what}: {e}")
            print(f"  DIFFERS  {what}: {e}")
            return
        self.agreed += 1
        print(f"  as PVE   {what}")

    def ok(self, what, call, check=None):
        """A call PVE answers successfully; `check` asserts the answer's shape and values."""
        self.calls += 1
        try:
            result = call()
        except ResourceException as e:
            self.disagreements.append(f"{what}: refused ({e}); PVE accepts it")
            print(f"  DIFFERS  {what}: refused ({e}); PVE accepts it")
            raise Broken(what) from e
        self.record(what, result, check)
        return result

    def fails(self, what, call, status, message, errors=None):
        """A call PVE refuses with `status` and a message matching `message` (a regex); for
        a 400, `errors` is the per-parameter map PVE sends beside it."""
        self.calls += 1
        try:
            result = call()
        except ResourceException as e:
            self.record(what, e, lambda err: refused_as(err, status, message, errors))
            return
        self.disagreements.append(f"{what}: accepted ({result!r}); PVE refuses it")
        print(f"  DIFFERS  {what}: accepted ({result!r}); PVE refuses it")


def refused_as(err, status, message, errors):
    """Checks a refusal: the status, the message (status line) and the per-parameter errors."""
    got = f"{err.status_code} {err.content}".strip()
    expect_eq(err.status_code, status, "status")
    expect(re.search(message, str(err.content)), f"message {got!r} !~ {message!r}")
    if errors is not None:
        expect_eq(err.errors, errors, "errors")
