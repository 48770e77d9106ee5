#!/usr/bin/env python3
"""A container's life through proxmoxer, the widely used independent Python client, checked
call by call against what Proxmox VE answers.

Runs against any PVE API endpoint (the atoll test suite points it at the simulator,
tests/it/pvesim_proxmoxer.rs), once with API-token login and once with ticket login, over
HTTPS as proxmoxer always speaks. Every expected shape, value and message below is read from
PVE's own source, cited next to it:

- pve-container src/PVE/API2/LXC.pm (create_vm, destroy_vm, resize_vm, vm_list),
  src/PVE/API2/LXC/Config.pm (vm_config, vm_pending, update_vm),
  src/PVE/API2/LXC/Status.pm (vm_status, vm_start, vm_stop, vm_shutdown, vm_reboot),
  src/PVE/LXC.pm (vmstatus), src/PVE/LXC/Config.pm (update_pct_config,
  vmconfig_hotplug_pending: memory is hot-plugged, hostname stays pending);
- pve-manager PVE/API2/Tasks.pm (node_tasks, read_task_status, read_task_log),
  PVE/API2/Version.pm, PVE/API2/Nodes.pm;
- pve-guest-common src/PVE/GuestHelpers.pm (config_with_pending_array),
  src/PVE/AbstractConfig.pm (load_config's "does not exist", the digest check).

Prints one line per disagreement and the summary `proxmoxer: N calls, M as PVE`; exits 1 when
any call did not answer as PVE would, 2 when the endpoint could not be driven at all.
"""

import argparse
import re
import sys
import traceback

from proxmoxer import ProxmoxAPI, ResourceException
from proxmoxer.core import AuthenticationError
from proxmoxer.tools import Tasks

SSH_KEY = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGtVSmaDqAKDk2KTqOGyQ4+vLKsJbb4sQdmv6WDxPQmE"
    " conformance@atoll"
)
HEX40 = re.compile(r"^[0-9a-f]{40}$")
MAC = r"[0-9A-F]{2}(?::[0-9A-F]{2}){5}"
GIB = 1 << 30
MIB = 1 << 20


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
            got = f"{e.status_code} {e.content}".strip()

            def check(_):
                expect_eq(e.status_code, status, "status")
                expect(re.search(message, str(e.content)), f"message {got!r} !~ {message!r}")
                if errors is not None:
                    expect_eq(e.errors, errors, "errors")

            self.record(what, None, check)
            return
        self.disagreements.append(f"{what}: accepted ({result!r}); PVE refuses it")
        print(f"  DIFFERS  {what}: accepted ({result!r}); PVE refuses it")


class Life:
    """One container's life with one login."""

    def __init__(self, args, ledger, prox, vmid, login):
        self.args = args
        self.led = ledger
        self.prox = prox
        self.vmid = vmid
        self.login = login
        self.node = prox.nodes(args.node)
        self.ct = self.node.lxc(vmid)
        self.tag = f"[{login}]"
        self.hwaddr = ""

    # --- tasks (pve-manager PVE/API2/Tasks.pm) ---------------------------------------------

    def upid(self, kind):
        """A check of a worker's UPID: `UPID:node:PID:PSTART:STARTTIME:type:id:user:`."""
        user = re.escape(self.args.task_user if self.login == "token" else self.args.user)

        def check(upid):
            pattern = (
                rf"^UPID:{re.escape(self.args.node)}:[0-9A-F]{{8}}:[0-9A-F]{{8,9}}:[0-9A-F]{{8}}"
                rf":{kind}:{self.vmid}:{user}:$"
            )
            expect(isinstance(upid, str) and re.match(pattern, upid), f"UPID {upid!r}")

        return check

    def task(self, what, kind, call):
        """Runs a worker call and waits for it through the tasks API, as PVE's clients do."""
        upid = self.led.ok(f"{self.tag} {what} returns a {kind} UPID", call, self.upid(kind))
        self.wait(what, kind, upid)
        return upid

    def wait(self, what, kind, upid):
        def check(status):
            expect(status is not None, "task did not stop in time")
            keys = ["upid", "node", "pid", "pstart", "starttime", "type", "id", "user"]
            expect_keys(status, keys + ["status", "exitstatus"], "task status")
            expect_eq(status["status"], "stopped", "status")
            expect_eq(status["exitstatus"], "OK", "exitstatus")
            expect_eq(status["upid"], upid, "upid")
            expect_eq(status["type"], kind, "type")
            expect_eq(status["id"], str(self.vmid), "id")
            for k in ("pid", "pstart", "starttime"):
                expect(isinstance(status[k], int), f"{k} is an integer: {status[k]!r}")
            # $convert_token_task: a token's task names the user and the token apart
            if self.login == "token":
                user, token = self.args.task_user.split("!", 1)
                expect_eq((status["user"], status.get("tokenid")), (user, token), "user, tokenid")
            else:
                expect_eq(status["user"], self.args.user, "user")
                expect("tokenid" not in status, "a ticket's task has no tokenid")

        self.led.ok(
            f"{self.tag} {what}: task stops with OK (Tasks.blocking_status)",
            lambda: Tasks.blocking_status(
                self.prox, upid, timeout=30, polling_interval=self.args.poll
            ),
            check,
        )

    def task_log_and_list(self, upid):
        def log_check(lines):
            expect(isinstance(lines, list) and lines, f"log lines: {lines!r}")
            expect_eq([line.get("n") for line in lines], list(range(1, len(lines) + 1)), "n")
            expect(all(isinstance(line.get("t"), str) for line in lines), "t is text")
            expect_eq(lines[-1]["t"], "TASK OK", "last line")

        node = self.node
        self.led.ok(f"{self.tag} task log", lambda: node.tasks(upid).log.get(), log_check)

        def list_check(rows):
            expect(isinstance(rows, list), f"task list: {rows!r}")
            row = next((r for r in rows if r.get("upid") == upid), None)
            expect(row is not None, f"{upid} listed for vmid {self.vmid}")
            expect_keys(row, ["node", "pid", "pstart", "starttime", "type", "id", "user"], "row")
            expect_eq(row.get("status"), "OK", "status of a finished task")
            expect(isinstance(row.get("endtime"), int), f"endtime: {row.get('endtime')!r}")
            expect(row["endtime"] >= row["starttime"], "endtime >= starttime")
            # an archived row goes through $convert_token_task as the status does
            if self.login == "token":
                user, token = self.args.task_user.split("!", 1)
                expect_eq((row["user"], row.get("tokenid")), (user, token), "user, tokenid")
            else:
                expect_eq((row["user"], "tokenid" in row), (self.args.user, False), "user")

        self.led.ok(
            f"{self.tag} task list by vmid",
            lambda: node.tasks.get(vmid=self.vmid, source="all"),
            list_check,
        )

    # --- the steps --------------------------------------------------------------------------

    def cluster(self):
        p = self.prox
        def version_check(v):
            expect_keys(v, ["version", "release", "repoid"], "version")
            expect(all(isinstance(v[k], str) for k in ("version", "release")), "strings")

        self.led.ok(f"{self.tag} GET /version", lambda: p.version.get(), version_check)

        def nodes_check(rows):
            row = next((r for r in rows if r.get("node") == self.args.node), None)
            expect(row is not None, f"node {self.args.node} listed")
            expect_eq((row.get("status"), row.get("type")), ("online", "node"), "status, type")

        self.led.ok(f"{self.tag} GET /nodes", lambda: p.nodes.get(), nodes_check)

        node, a = self.node, self.args

        def storages_check(rows):
            row = next((r for r in rows if r.get("storage") == a.storage), None)
            expect(row is not None, f"storage {a.storage} listed")
            # PVE::Storage::Plugin content_hash_to_string: sorted, comma-separated
            expect_eq((row.get("type"), row.get("content")), ("lvmthin", "images,rootdir"), "type, content")
            expect_eq((row.get("active"), row.get("enabled")), (1, 1), "active, enabled")
            for k in ("total", "used", "avail"):
                expect(isinstance(row.get(k), int), f"{k} is an integer: {row.get(k)!r}")

        self.led.ok(f"{self.tag} GET /nodes/{{node}}/storage", lambda: node.storage.get(), storages_check)

        def templates_check(rows):
            row = next((r for r in rows if r.get("volid") == a.template), None)
            expect(row is not None, f"{a.template} listed")
            expect_eq((row.get("content"), row.get("format")), ("vztmpl", "tzst"), "content, format")
            expect(isinstance(row.get("size"), int), f"size {row.get('size')!r}")

        tstore = a.template.split(":", 1)[0]
        self.led.ok(
            f"{self.tag} GET storage content=vztmpl (the templates)",
            lambda: node.storage(tstore).content.get(content="vztmpl"),
            templates_check,
        )

        # PVE/API2/Cluster.pm nextid: the lowest free id; a number (or its text, depending on
        # how Perl last used the scalar), at least 100
        self.led.ok(
            f"{self.tag} GET /cluster/nextid",
            lambda: p.cluster.nextid.get(),
            lambda n: expect(str(n).isdigit() and int(n) >= 100, f"nextid {n!r}"),
        )

    def create(self):
        a = self.args
        params = dict(
            vmid=self.vmid,
            ostemplate=a.template,
            hostname=f"conform-{self.login}",
            rootfs=f"{a.storage}:8",
            net0=f"name=eth0,bridge={a.bridge},ip=10.10.0.{self.vmid % 200 + 2}/24,gw=10.10.0.1",
            memory=512,
            swap=256,
            cores=2,
            unprivileged=1,
            features="nesting=1",
            onboot=1,
            nameserver="10.10.0.1",
            searchdomain="lab.example",
            description="made by proxmoxer",
            tags="conformance",
            password="s3cret-password",
            **{"ssh-public-keys": SSH_KEY},
        )
        upid = self.task("create (pct form)", "vzcreate", lambda: self.node.lxc.post(**params))
        self.task_log_and_list(upid)

    def indexes_and_refusals(self):
        """Directory indexes (API2/LXC.pm vmdiridx, LXC/Status.pm vmcmdidx) and the refusals
        a client meets first: a taken VMID (PVE::Cluster::check_vmid_unused) and
        parameters that fail the schema (RESTHandler: 400 with the per-parameter errors)."""
        ct, tag, vmid = self.ct, self.tag, self.vmid
        subdirs = lambda want: lambda rows: expect_eq([r.get("subdir") for r in rows], want, "subdirs")  # noqa: E731
        self.led.ok(
            f"{tag} GET /nodes/{{node}}/lxc/{{vmid}} (index)",
            lambda: ct.get(),
            subdirs(
                ["config", "pending", "status", "vncproxy", "termproxy", "vncwebsocket", "spiceproxy"]
                + ["migrate", "clone", "rrd", "rrddata", "firewall", "snapshot", "resize", "interfaces"]
            ),
        )
        self.led.ok(
            f"{tag} GET .../status (index)",
            lambda: ct.status.get(),
            subdirs(["current", "start", "stop", "shutdown", "reboot", "migrate"]),
        )
        self.led.fails(
            f"{tag} create with a VMID in use",
            lambda: self.node.lxc.post(vmid=vmid, ostemplate=self.args.template),
            500,
            rf"^CT {vmid} already exists on node '{re.escape(self.args.node)}'",
        )
        self.led.fails(
            f"{tag} PUT config memory=abc",
            lambda: ct.config.put(memory="abc"),
            400,
            r"^Parameter verification failed\.",
            {"memory": "type check ('integer') failed - got 'abc'"},
        )
        self.led.fails(
            f"{tag} PUT config with an unknown option",
            lambda: ct.config.put(colour="blue"),
            400,
            r"^Parameter verification failed\.",
            {"colour": "property is not defined in schema and the schema does not allow additional properties"},
        )

    def read_config(self):
        vmid, a = self.vmid, self.args

        def check(c):
            keys = ["arch", "cores", "digest", "features", "hostname", "memory", "net0"]
            expect_keys(c, keys + ["ostype", "rootfs", "swap", "unprivileged", "onboot"], "config")
            expect(HEX40.match(c["digest"]), f"digest {c['digest']!r}")
            # integers and booleans come back as JSON numbers (AbstractConfig check_type)
            want = {"cores": 2, "memory": 512, "swap": 256, "unprivileged": 1, "onboot": 1}
            expect_eq({k: c[k] for k in want}, want, "numbers")
            expect_eq(c["hostname"], f"conform-{self.login}", "hostname")
            expect_eq((c["arch"], c["ostype"]), ("amd64", "debian"), "arch, ostype")
            expect_eq(c["rootfs"], f"{a.storage}:vm-{vmid}-disk-0,size=8G", "rootfs")
            net = (
                rf"^name=eth0,bridge={a.bridge},gw=10\.10\.0\.1,hwaddr={MAC},"
                rf"ip=10\.10\.0\.{vmid % 200 + 2}/24,type=veth$"
            )
            expect(re.match(net, c["net0"]), f"net0 {c['net0']!r}")
            expect_eq(c["features"], "nesting=1", "features")
            expect_eq(c.get("tags"), "conformance", "tags")
            expect_eq(c.get("nameserver"), "10.10.0.1", "nameserver")
            # the description is kept as comment lines; it reads back with its newline
            expect_eq(c.get("description"), "made by proxmoxer\n", "description")
            for secret in ("password", "ssh-public-keys", "ostemplate", "storage"):
                expect(secret not in c, f"{secret} is not part of the config")

        return self.led.ok(f"{self.tag} GET config", lambda: self.ct.config.get(), check)

    def read_pending(self, what, expected):
        """`expected`: key -> the entry's fields besides `key`, for the keys that matter."""

        def check(rows):
            expect(isinstance(rows, list), f"pending: {rows!r}")
            by_key = {r.get("key"): r for r in rows}
            expect("digest" in by_key, "the digest is one of the entries")
            for key, fields in expected.items():
                entry = {k: v for k, v in by_key.get(key, {}).items() if k != "key"}
                expect_eq(entry, fields, f"entry {key}")
            expect(
                all("pending" not in r and "delete" not in r for r in rows if r["key"] not in expected),
                f"nothing else pending: {[r for r in rows if r['key'] not in expected and len(r) > 2]}",
            )

        self.led.ok(f"{self.tag} GET pending {what}", lambda: self.ct.pending.get(), check)

    def status(self, what, running, memory_mib, disk_gib):
        def check(s):
            keys = ["status", "vmid", "name", "type", "maxmem", "maxswap", "maxdisk", "cpus"]
            expect_keys(s, keys + ["uptime", "mem", "disk", "cpu", "netin", "netout", "ha"], "status")
            expect_eq(s["status"], "running" if running else "stopped", "status")
            expect_eq((s["vmid"], s["type"]), (self.vmid, "lxc"), "vmid, type")
            expect_eq(s["maxmem"], memory_mib * MIB, "maxmem")
            expect_eq(s["maxswap"], 256 * MIB, "maxswap")
            expect_eq(s["cpus"], 2, "cpus")
            expect_eq(s["ha"].get("managed"), 0, "ha.managed")
            expect_eq("pid" in s, running, "pid only while running")
            # LXC.pm vmstatus: a stopped container's maxdisk is its rootfs size
            expect_eq(s["maxdisk"], disk_gib * GIB, "maxdisk")

        self.led.ok(f"{self.tag} status/current {what}", lambda: self.ct.status.current.get(), check)

    def in_list(self):
        def check(rows):
            row = next((r for r in rows if str(r.get("vmid")) == str(self.vmid)), None)
            expect(row is not None, f"{self.vmid} listed")
            expect_eq(row.get("vmid"), self.vmid, "vmid is a number")
            expect_eq((row.get("status"), row.get("name")), ("stopped", f"conform-{self.login}"), "row")

        self.led.ok(f"{self.tag} GET /nodes/{{node}}/lxc", lambda: self.node.lxc.get(), check)

    def interfaces(self):
        """API2/LXC.pm ip (`interfaces`, LXC.pm get_interfaces): `ip --json a` inside the
        running CT, with the MAC as the kernel prints it (lower case)."""
        ip = f"10.10.0.{self.vmid % 200 + 2}"

        def check(rows):
            by_name = {r.get("name"): r for r in rows or []}
            expect_eq(sorted(by_name), ["eth0", "lo"], "interfaces")
            eth0 = by_name["eth0"]
            expect_keys(eth0, ["hwaddr", "hardware-address", "inet", "ip-addresses"], "eth0")
            expect_eq(eth0["hwaddr"], self.hwaddr.lower(), "hwaddr")
            expect_eq(eth0["inet"], f"{ip}/24", "inet")
            expect(
                {"ip-address": ip, "ip-address-type": "inet", "prefix": 24} in eth0["ip-addresses"],
                f"ip-addresses {eth0['ip-addresses']!r}",
            )

        self.led.ok(f"{self.tag} GET interfaces of the running CT", lambda: self.ct.interfaces.get(), check)

    def live_and_pending(self):
        """LXC/Config.pm on a running CT: memory is hot-plugged, hostname is one of the
        $LXC_FASTPLUG_OPTIONS (written at once), cmode and a nameserver removal stay pending."""
        ct, tag, old = self.ct, self.tag, f"conform-{self.login}"
        new = f"{old}-renamed"
        null = lambda r: expect_eq(r, None, "answer")  # noqa: E731 - returns => { type => 'null' }
        self.led.ok(f"{tag} PUT config memory=1024 on a running CT (hot-plugged)", lambda: ct.config.put(memory=1024), null)
        self.led.ok(f"{tag} PUT config hostname on a running CT (fast-plugged)", lambda: ct.config.put(hostname=new), null)
        self.led.ok(f"{tag} PUT config cmode=shell on a running CT (kept pending)", lambda: ct.config.put(cmode="shell"), null)
        self.led.ok(f"{tag} PUT config delete=nameserver on a running CT", lambda: ct.config.put(delete="nameserver"), null)
        # a new mount point is hot-plugged (apply_pending_mountpoint allocates its volume)
        self.led.ok(
            f"{tag} PUT config mp0 on a running CT (hot-plugged)",
            lambda: ct.config.put(mp0=f"{self.args.storage}:2,mp=/data"),
            null,
        )
        self.read_pending(
            "(cmode pending, nameserver to delete)",
            {
                "memory": {"value": 1024},
                "hostname": {"value": new},
                "mp0": {"value": f"{self.args.storage}:vm-{self.vmid}-disk-1,mp=/data,size=2G"},
                "cmode": {"pending": "shell"},
                "nameserver": {"value": "10.10.0.1", "delete": 1},
            },
        )
        # AbstractConfig load_current_config: without `current`, pending values and deletions
        # are taken in
        self.led.ok(
            f"{tag} GET config?current=1 shows what runs",
            lambda: ct.config.get(current=1),
            lambda c: expect_eq(
                (c["hostname"], c["memory"], c.get("cmode"), c.get("nameserver")),
                (new, 1024, None, "10.10.0.1"),
                "hostname, memory, cmode, nameserver",
            ),
        )
        self.led.ok(
            f"{tag} GET config takes the pending changes in",
            lambda: ct.config.get(),
            lambda c: expect_eq((c.get("cmode"), c.get("nameserver")), ("shell", None), "cmode, nameserver"),
        )
        self.led.ok(f"{tag} PUT config revert=nameserver", lambda: ct.config.put(revert="nameserver"), null)
        self.led.fails(
            f"{tag} PUT config with a stale digest",
            lambda: ct.config.put(cores=3, digest="0" * 40),
            500,
            r"^detected modified configuration - file changed by other user\? Try again\.",
        )
        return new

    def power_and_resize(self):
        ct, tag, vmid = self.ct, self.tag, self.vmid
        self.status("(stopped)", False, 512, 8)
        self.task("start", "vzstart", lambda: ct.status.start.post())
        self.status("(running)", True, 512, 8)
        self.interfaces()
        self.led.fails(f"{tag} start a running CT", lambda: ct.status.start.post(), 500, rf"^CT {vmid} already running")
        self.led.fails(
            f"{tag} destroy a running CT",
            lambda: ct.delete(),
            500,
            rf"^unable to destroy CT {vmid} - container is running",
        )
        new = self.live_and_pending()
        self.task("reboot (applies pending)", "vzreboot", lambda: ct.status.reboot.post())
        self.read_pending(
            "(applied by the reboot)",
            {"hostname": {"value": new}, "cmode": {"value": "shell"}, "nameserver": {"value": "10.10.0.1"}},
        )
        self.task("resize mp0 +1G on the running CT", "resize", lambda: ct.resize.put(disk="mp0", size="+1G"))
        self.led.ok(
            f"{tag} GET config after the online resize",
            lambda: ct.config.get(),
            lambda c: expect_eq(c.get("mp0"), f"{self.args.storage}:vm-{vmid}-disk-1,mp=/data,size=3G", "mp0"),
        )
        self.task("shutdown", "vzshutdown", lambda: ct.status.shutdown.post(timeout=30))
        self.led.fails(f"{tag} stop a stopped CT", lambda: ct.status.stop.post(), 500, rf"^CT {vmid} not running")
        self.task("resize rootfs +2G", "resize", lambda: ct.resize.put(disk="rootfs", size="+2G"))
        self.led.ok(
            f"{tag} GET config after resize",
            lambda: ct.config.get(),
            lambda c: expect_eq(c["rootfs"], f"{self.args.storage}:vm-{vmid}-disk-0,size=10G", "rootfs"),
        )
        self.status("(stopped, resized)", False, 1024, 10)
        self.led.fails(
            f"{tag} resize rootfs smaller",
            lambda: ct.resize.put(disk="rootfs", size="4G"),
            500,
            r"^unable to shrink disk size",
        )
        self.task("start again", "vzstart", lambda: ct.status.start.post())
        self.task("stop", "vzstop", lambda: ct.status.stop.post())

    def template(self):
        """API2/LXC.pm template: answers null and converts in a `vztemplate` worker; a
        template's volumes become `base-` volumes and it cannot start (Status.pm vm_start)."""
        ct, tag, vmid, node = self.ct, self.tag, self.vmid, self.node
        self.led.ok(f"{tag} POST template", lambda: ct.template.post(), lambda r: expect_eq(r, None, "answer"))

        def find_task(rows):
            expect(len(rows) == 1, f"one vztemplate task for {vmid}: {rows!r}")
            self.upid("vztemplate")(rows[0]["upid"])

        rows = self.led.ok(
            f"{tag} the vztemplate task is listed",
            lambda: node.tasks.get(vmid=vmid, typefilter="vztemplate", source="all"),
            find_task,
        )
        if rows:
            self.wait("template", "vztemplate", rows[0]["upid"])
        self.led.ok(
            f"{tag} GET config of the template",
            lambda: ct.config.get(),
            lambda c: expect_eq(
                (c.get("template"), c["rootfs"]),
                (1, f"{self.args.storage}:base-{vmid}-disk-0,size=10G"),
                "template, rootfs",
            ),
        )
        self.led.ok(
            f"{tag} status/current of the template",
            lambda: ct.status.current.get(),
            lambda s: expect_eq((s.get("template"), s["status"]), (1, "stopped"), "template, status"),
        )
        self.led.fails(
            f"{tag} POST template on a template",
            lambda: ct.template.post(),
            500,
            r"^you can't convert a template to a template",
        )
        upid = self.led.ok(f"{tag} start a template returns a vzstart UPID", lambda: ct.status.start.post(), self.upid("vzstart"))

        def failed(status):
            expect(status is not None, "task did not stop in time")
            expect_eq(
                (status.get("status"), status.get("exitstatus")),
                ("stopped", "you can't start a CT if it's a template"),
                "status, exitstatus",
            )

        self.led.ok(
            f"{tag} start a template: the task fails with PVE's reason",
            lambda: Tasks.blocking_status(self.prox, upid, timeout=30, polling_interval=self.args.poll),
            failed,
        )
        self.led.ok(
            f"{tag} the failed task's log ends in TASK ERROR",
            lambda: node.tasks(upid).log.get(),
            lambda lines: expect_eq(lines[-1].get("t"), "TASK ERROR: you can't start a CT if it's a template", "last line"),
        )

    def destroy(self):
        vmid = self.vmid
        self.task("destroy", "vzdestroy", lambda: self.ct.delete(purge=1))
        self.led.ok(
            f"{self.tag} the destroyed CT's volumes are gone",
            lambda: self.node.storage(self.args.storage).content.get(vmid=vmid),
            lambda rows: expect_eq([r.get("volid") for r in rows], [], "volumes"),
        )
        self.led.fails(
            f"{self.tag} GET config of a destroyed CT",
            lambda: self.ct.config.get(),
            500,
            rf"^Configuration file 'nodes/{re.escape(self.args.node)}/lxc/{vmid}\.conf' does not exist",
        )

    def run(self):
        self.cluster()
        self.create()
        config = self.read_config()
        self.hwaddr = re.search(r"hwaddr=([^,]+)", config["net0"]).group(1)
        self.read_pending("(nothing pending)", {})
        self.indexes_and_refusals()
        self.in_list()
        self.power_and_resize()
        self.template()
        self.destroy()


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
