//! A node's network interfaces: every write of a node (creates and changes first, each after
//! the interfaces it names as ports, slaves or raw device; then deletes, each before the
//! interfaces it named) goes to PVE's pending `/etc/network/interfaces.new`, and then the
//! node's pending configuration is applied once (`PUT /nodes/{node}/network`, an `ifreload`
//! task). Nodes go side by side. An interface is reported done only once the reload has
//! run; a reload that fails fails every interface written on that node, with PVE's error.

use std::collections::{BTreeMap, BTreeSet};

use futures::future::join_all;
use serde_json::Value as Json;

use super::phases::Work;
use super::{Outcome, Run};
use crate::proxmox::plan::{DesiredObject, ResourceChange, StepOp};
use crate::proxmox::types::NodeName;

type Item<'p> = (&'p ResourceChange, Vec<StepOp>, Option<&'p DesiredObject>);

/// What one interface's write did: its detail, or its error and whether the cluster changed.
type Written = (String, Result<String, (String, bool)>);

fn name(change: &ResourceChange) -> &str {
    change
        .object
        .as_ref()
        .and_then(|o| o.name.as_deref())
        .unwrap_or_default()
}

/// The interfaces an interface names: its ports or slaves, its raw device (`eno1.20` names
/// `eno1`). A write reads them from the configuration, a delete from what the plan shows
/// going away.
fn names(item: &Item<'_>) -> BTreeSet<String> {
    let (change, _, desired) = item;
    let mut out = BTreeSet::new();
    if let Some((dev, _)) = name(change).rsplit_once('.') {
        out.insert(dev.to_owned());
    }
    const KEYS: [&str; 3] = ["bridge_ports", "slaves", "vlan-raw-device"];
    match desired {
        Some(object) => {
            for key in KEYS {
                let words = object
                    .fields
                    .get(key)
                    .map(String::as_str)
                    .unwrap_or_default();
                out.extend(words.split_whitespace().map(str::to_owned));
            }
        }
        None => {
            for attr in change
                .attributes
                .iter()
                .filter(|a| KEYS.contains(&a.path.as_str()))
            {
                match &attr.before {
                    Json::String(text) => out.extend(text.split_whitespace().map(str::to_owned)),
                    Json::Array(items) => {
                        out.extend(items.iter().filter_map(Json::as_str).map(str::to_owned));
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

/// The items in an order PVE's checks of the whole file accept: a write after the interfaces
/// it names; a delete before them. A cycle (which PVE refuses anyway) keeps the given order.
fn in_order(items: Vec<Item<'_>>, deleting: bool) -> Vec<Item<'_>> {
    let mut todo: Vec<(Item<'_>, BTreeSet<String>)> = items
        .into_iter()
        .map(|i| {
            let n = names(&i);
            (i, n)
        })
        .collect();
    let mut out = Vec::new();
    while !todo.is_empty() {
        let pending: BTreeSet<String> = todo.iter().map(|(i, _)| name(i.0).to_owned()).collect();
        let waits = |(item, named): &(Item<'_>, BTreeSet<String>)| {
            if deleting {
                // deleted only once nothing still to delete names it
                let me = name(item.0);
                todo.iter()
                    .any(|(other, n)| name(other.0) != me && n.contains(me))
            } else {
                named
                    .iter()
                    .any(|n| n != name(item.0) && pending.contains(n))
            }
        };
        let ready: Vec<bool> = todo.iter().map(|t| !waits(t)).collect();
        if !ready.contains(&true) {
            out.extend(todo.into_iter().map(|(i, _)| i));
            break;
        }
        let mut rest = Vec::new();
        for (t, go) in todo.into_iter().zip(ready) {
            if go {
                out.push(t.0);
            } else {
                rest.push(t);
            }
        }
        todo = rest;
    }
    out
}

impl Run<'_> {
    /// The network interfaces of every node, before the guests that may use them.
    pub(super) async fn networks(&self, work: &Work<'_>, results: &mut BTreeMap<String, Outcome>) {
        let mut by_node: BTreeMap<String, Vec<Item<'_>>> = BTreeMap::new();
        for item in work.network() {
            if !results.contains_key(&item.0.address) {
                by_node.entry(item.0.node.clone()).or_default().push(item);
            }
        }
        let done = join_all(
            by_node
                .into_iter()
                .map(|(node, items)| self.node_network(node, items)),
        )
        .await;
        results.extend(done.into_iter().flatten());
    }

    /// One node's writes, then its one reload.
    async fn node_network(&self, node: String, items: Vec<Item<'_>>) -> Vec<(String, Outcome)> {
        let (deletes, writes): (Vec<_>, Vec<_>) = items
            .into_iter()
            .partition(|(_, ops, _)| ops.as_slice() == [StepOp::Delete]);
        let mut written: Vec<Written> = Vec::new();
        let ordered = in_order(writes, false)
            .into_iter()
            .chain(in_order(deletes, true));
        for (change, ops, desired) in ordered {
            let result = self.object_steps(change, &ops, desired).await;
            written.push((change.address.clone(), result));
        }
        let changed = written
            .iter()
            .any(|(_, r)| matches!(r, Ok(_) | Err((_, true))));
        let reload = if changed {
            self.reload(&node).await
        } else {
            Ok(())
        };
        written
            .into_iter()
            .map(|(address, result)| {
                let outcome = match (result, &reload) {
                    (Ok(detail), Ok(())) => self.done(
                        &address,
                        format!("{detail}; node {node}'s network reloaded"),
                        Vec::new(),
                    ),
                    (Ok(_), Err(e)) => self.failed(
                        &address,
                        format!(
                            "written to node {node}'s network configuration, but applying it \
                             failed: {e}; see the task log on the node, fix the cause there and \
                             run `ifreload -a` (or apply again)"
                        ),
                        true,
                    ),
                    (Err((error, changed)), _) => self.failed(&address, error, changed),
                };
                (address, outcome)
            })
            .collect()
    }

    /// `PUT /nodes/{node}/network` and its task.
    async fn reload(&self, node: &str) -> Result<(), String> {
        let node: NodeName = node
            .parse()
            .map_err(|e| format!("node name {node:?}: {e}"))?;
        let api = self.exec.api;
        let upid = api
            .network_reload(&node)
            .await
            .map_err(|e| format!("reloading the network of node {node}: {e}"))?;
        api.wait_task(&upid)
            .await
            .map(|_| ())
            .map_err(|e| format!("reloading the network of node {node}: {e}"))
    }
}
