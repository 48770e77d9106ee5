"""The reading half of a container's life through proxmoxer (used by proxmoxer_ct.py): tasks
through the tasks API, the node's storages and templates, the `pct create` form, config,
pending, status, the directory indexes and the refusals a client meets first.

Sources: pve-container src/PVE/API2/LXC.pm (create_vm, vmdiridx, vm_list, ip),
src/PVE/API2/LXC/Config.pm (vm_config, vm_pending), src/PVE/API2/LXC/Status.pm (vmcmdidx,
vm_status), src/PVE/LXC.pm (vmstatus, get_interfaces); pve-manager PVE/API2/Tasks.pm
(node_tasks, read_task_status, read_task_log), PVE/API2/Version.pm, PVE/API2/Nodes.pm,
PVE/API2/Cluster.pm (nextid); pve-guest-common src/PVE/GuestHelpers.pm
(config_with_pending_array), src/PVE/AbstractConfig.pm; pve-common src/PVE/JSONSchema.pm
(print_property_string: the default key, then required keys, then the rest, sorted).
"""

import re

from proxmoxer.tools import Tasks

from ledger import expect, expect_eq, expect_keys

SSH_KEY = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGtVSmaDqAKDk2KTqOGyQ4+vLKsJbb4sQdmv6WDxPQmE"
    " conformance@atoll"
)
HEX40 = re.compile(r"^[0-9a-f]{40}$")
MAC = r"[0-9A-F]{2}(?::[0-9A-F]{2}){5}"
GIB = 1 << 30
MIB = 1 << 20


class Reads:
    """One container with one login: the calls that read, and the create."""

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

    def volumes(self):
        """pve-storage Plugin.pm list_volumes: a container's volume is listed as `rootdir`,
        and only under that content type (`images` is for VMs and orphans)."""
        store, vmid = self.node.storage(self.args.storage), self.vmid
        volid = f"{self.args.storage}:vm-{vmid}-disk-0"

        def rootdir(rows):
            row = next((r for r in rows if r.get("volid") == volid), None)
            expect(row is not None, f"{volid} listed as rootdir")
            want = {"content": "rootdir", "vmid": vmid, "format": "raw", "size": 8 * GIB}
            expect_eq({k: row.get(k) for k in want}, want, "volume")

        self.led.ok(f"{self.tag} GET storage content=rootdir", lambda: store.content.get(content="rootdir"), rootdir)
        self.led.ok(
            f"{self.tag} GET storage content=images leaves the CT's volume out",
            lambda: store.content.get(content="images"),
            lambda rows: expect(all(r.get("volid") != volid for r in rows), f"{volid} listed as images"),
        )

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
