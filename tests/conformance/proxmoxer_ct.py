#!/usr/bin/env python3
"""A container's life through proxmoxer, the widely used independent Python client, checked
call by call against what Proxmox VE answers.

Runs against any PVE API endpoint (the atoll test suite points it at the simulator,
tests/it/pvesim_proxmoxer.rs), once with API-token login and once with ticket login, over
HTTPS as proxmoxer always speaks. Every expected shape, value and message is read from PVE's
own source, cited where it is checked: ct_reads.py (tasks, config, pending, status, indexes),
ct_changes.py (live and pending changes, power actions, resize, template, destroy), and the
logins below (pve-access-control PVE/API2/AccessControl.pm, pve-manager PVE/HTTPServer.pm).

Prints one line per call and the summary `proxmoxer: N calls, M as PVE`; exits 1 when any
call did not answer as PVE would.
"""

import sys

sys.dont_write_bytecode = True  # run from the source tree: leave no __pycache__ behind

import argparse  # noqa: E402
import traceback  # noqa: E402

from proxmoxer import ProxmoxAPI  # noqa: E402
from proxmoxer.core import AuthenticationError  # noqa: E402

from ct_changes import Life  # noqa: E402
from ledger import Broken, Ledger, expect, expect_eq, expect_keys  # noqa: E402


def connect(args, login):
    host = args.url.removeprefix("https://").rstrip("/")
    if login == "token":
        user_token, secret = args.token.split("=", 1)
        user, token_name = user_token.split("!", 1)
        return ProxmoxAPI(
            host, user=user, token_name=token_name, token_value=secret, verify_ssl=False, timeout=30
        )
    return ProxmoxAPI(host, user=args.user, password=args.password, verify_ssl=False, timeout=30)


def ticket_answer(args, ledger):
    """PVE/API2/AccessControl.pm create_ticket: what proxmoxer's ticket login reads."""
    prox = connect(args, "token")

    def check(t):
        expect_keys(t, ["username", "ticket", "CSRFPreventionToken", "cap"], "ticket answer")
        expect_eq(t["username"], args.user, "username")
        expect(t["ticket"].startswith(f"PVE:{args.user}:"), f"ticket {t['ticket'][:20]!r}...")
        expect(isinstance(t["cap"], dict), "cap is an object")

    first = ledger.ok(
        "[ticket] POST /access/ticket answer",
        lambda: prox.access.ticket.post(username=args.user, password=args.password),
        check,
    )
    # a valid ticket as the password renews it, as proxmoxer does past its renew_age
    ledger.ok(
        "[ticket] POST /access/ticket renews a ticket",
        lambda: prox.access.ticket.post(username=args.user, password=first["ticket"]),
        check,
    )


def wrong_token(args, ledger):
    """PVE/HTTPServer.pm auth_handler: a token whose secret is wrong gets a 401."""
    user_token = args.token.split("=", 1)[0]
    bad = argparse.Namespace(**{**vars(args), "token": f"{user_token}=not-the-secret"})
    prox = connect(bad, "token")
    ledger.fails("[token] a wrong token secret", lambda: prox.version.get(), 401, r"^Authentication failed!")


def wrong_password(args, ledger):
    """PVE/API2/AccessControl.pm create_ticket: a bad password is a 401; proxmoxer raises."""
    ledger.calls += 1
    try:
        connect(argparse.Namespace(**{**vars(args), "password": "not-the-password"}), "ticket")
    except AuthenticationError as e:
        ledger.record("[ticket] login with a wrong password", str(e), lambda m: expect("code: 401" in m, m))
        return
    ledger.record("[ticket] login with a wrong password", None, lambda _: expect(False, "accepted"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True, help="https://HOST:PORT")
    ap.add_argument("--token", required=True, help="USER@REALM!TOKENID=SECRET")
    ap.add_argument("--user", default="root@pam")
    ap.add_argument("--password", required=True)
    ap.add_argument("--node", default="pve")
    ap.add_argument("--storage", default="local-lvm")
    ap.add_argument("--bridge", default="vmbr0")
    ap.add_argument("--template", default="local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst")
    ap.add_argument("--vmid", type=int, default=900, help="first of the two container ids")
    ap.add_argument("--poll", type=float, default=0.05, help="task polling interval (s)")
    args = ap.parse_args()
    args.task_user = args.token.split("=", 1)[0]

    ledger = Ledger()
    for offset, login in enumerate(["token", "ticket"]):
        print(f"{login} login:")
        try:
            prox = connect(args, login)
            Life(args, ledger, prox, args.vmid + offset, login).run()
        except Broken as e:
            print(f"  stopped: {e} failed, the rest of this life cannot run")
        except Exception:  # an answer proxmoxer could not even handle is a disagreement too
            traceback.print_exc()
            ledger.disagreements.append(f"{login}: unexpected error")
    try:
        ticket_answer(args, ledger)
    except Broken:
        pass
    wrong_password(args, ledger)
    wrong_token(args, ledger)

    print(f"proxmoxer: {ledger.calls} calls, {ledger.agreed} as PVE")
    for d in ledger.disagreements:
        print(f"  differs: {d}")
    sys.exit(0 if ledger.agreed == ledger.calls and not ledger.disagreements else 1)


if __name__ == "__main__":
    main()
