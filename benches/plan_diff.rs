//! Cost of the pure plan engine: diff, guard and rendering for 1,000 applied containers, with
//! no changes and with one restart-needing change each. Prints numbers; asserts nothing.
//! Run: `cargo bench --bench plan_diff`.

#[path = "../tests/it/plan_support/mod.rs"]
mod plan_support;

use std::hint::black_box;
use std::time::{Duration, Instant};

use atoll::proxmox::guard::{GuardPolicy, ProtectSpec, ProtectedSet, check};
use atoll::proxmox::plan::{Desired, DesiredValue, Inventory};
use atoll::render::{plan_json, plan_text};
use plan_support::{World, desired_guest, live_guest, state_for};

const GUESTS: u32 = 1_000;
const RUNS: usize = 20;

fn world(change: bool) -> World {
    let mut world = World {
        desired: Vec::new(),
        state: Vec::new(),
        inventory: Inventory::default(),
    };
    for i in 0..GUESTS {
        let (key, vm_id) = (format!("ct-{i:04}"), 3_000 + i);
        let mut guest = desired_guest(&key, vm_id);
        world.state.push(state_for(&guest, vm_id));
        if change {
            let nesting = DesiredValue::Known("nesting=1".to_owned());
            guest.config.insert("features".to_owned(), nesting);
        }
        world
            .inventory
            .guests
            .insert(vm_id, live_guest(&key, vm_id));
        world.desired.push(Desired::Guest(guest));
    }
    world
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time(mut f: impl FnMut()) -> Duration {
    median(
        (0..RUNS)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed()
            })
            .collect(),
    )
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let protected = ProtectedSet::resolve(&[ProtectSpec::VmId(3_000)], None, []);
    for (label, change) in [("no changes", false), ("1 restart each", true)] {
        let world = world(change);
        let plan = world.plan();
        let diff = time(|| {
            black_box(world.plan());
        });
        let guard = time(|| {
            let mut plan = plan.clone();
            check(
                &mut plan,
                &protected,
                GuardPolicy::default(),
                &world.desired,
            );
            black_box(plan);
        });
        let text = time(|| {
            black_box(plan_text(&plan));
        });
        let json = time(|| {
            black_box(plan_json(&plan));
        });
        println!(
            "{GUESTS} containers, {label}: diff {diff:?}, guard {guard:?}, text {text:?} ({} bytes), json {json:?} ({} bytes)",
            plan_text(&plan).len(),
            plan_json(&plan).len()
        );
    }
    match peak_rss_kib() {
        Some(kib) => println!("peak RSS: {} MiB", kib / 1024),
        None => println!("peak RSS: unavailable (no /proc/self/status)"),
    }
}
