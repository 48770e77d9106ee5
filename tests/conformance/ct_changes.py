"""The changing half of a container's life through proxmoxer (used by proxmoxer_ct.py):
hot-plugged, fast-plugged and pending changes on a running container, the power actions,
resize, template and destroy.

Sources: pve-container src/PVE/LXC/Config.pm (update_pct_config, $LXC_FASTPLUG_OPTIONS,
vmconfig_hotplug_pending, vmconfig_apply_pending), src/PVE/API2/LXC.pm (resize_vm, template,
destroy_vm), src/PVE/API2/LXC/Status.pm (vm_start, vm_stop, vm_shutdown, vm_reboot);
pve-guest-common src/PVE/AbstractConfig.pm (load_current_config, load_config's
"does not exist"); pve-common src/PVE/Tools.pm (assert_if_modified).
"""

import re

from proxmoxer.tools import Tasks

from ct_reads import Reads
from ledger import expect, expect_eq


class Life(Reads):
    """One container's whole life with one login."""

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
        self.volumes()
        self.indexes_and_refusals()
        self.in_list()
        self.power_and_resize()
        self.template()
        self.destroy()
