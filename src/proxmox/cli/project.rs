//! The pipeline shared by `atoll plan` and `atoll apply`: load the configuration (twice: the
//! second time with the values atoll already knows), read state, refresh the cluster, adopt
//! guests missing from state, plan, and mark what the guard refuses. Public: the server's
//! runner calls the same pipeline (with [`super::settle_state`] before an apply).

use std::path::PathBuf;

use anyhow::{Context as _, bail};
use serde_json::Value as Json;

use super::settings::Protect;
use crate::proxmox::apply::{Now, adopt};
use crate::proxmox::client::ProxmoxApi;
use crate::proxmox::desired::{self, DesiredState};
use crate::proxmox::discover::{LocalMacs, NoMatch, discover_self};
use crate::proxmox::guard::{self, ProtectedSet, SelfGuest};
use crate::proxmox::inventory::{Partial, refresh_state};
use crate::proxmox::plan::{
    self, Action, AttributeChange, Drift, Inventory, Plan, PlanInput, PlanSource, ResourceChange,
    StateEntry,
};
use crate::proxmox::state::{ProjectState, StateHandle};
use crate::proxmox::types::Mac;
use crate::tfconfig::{self, Input};

/// Everything a plan was made from, kept for apply.
#[derive(Debug)]
pub struct Prepared {
    pub state: ProjectState,
    pub desired: DesiredState,
    /// Guests adopted into state (not yet written).
    pub adopted: Vec<StateEntry>,
    pub plan: Plan,
    pub protected: ProtectedSet,
    /// What the refresh read.
    pub inventory: Inventory,
}

impl Prepared {
    /// What a saved plan is checked against before it is applied ([`check_fresh`]).
    ///
    /// [`check_fresh`]: crate::proxmox::apply::check_fresh
    pub fn now(&self) -> Now<'_> {
        Now {
            state_fingerprint: &self.state.fingerprint,
            config_hash: self.desired.config_hash(),
            inventory: &self.inventory,
        }
    }
}

/// Loads and evaluates the configuration with the values known from `state`.
pub fn load_desired(input: &Input, state: &ProjectState) -> anyhow::Result<DesiredState> {
    let generated = state.generated_values();
    let first = tfconfig::load_with_known(input, &desired::known_values(&[], &generated));
    if first.has_errors() {
        bail!("{}", first.render_diagnostics());
    }
    // Download ids are known before apply: evaluate again with them when anything uses one.
    let known = desired::known_values(&first.resources, &generated);
    let needs_second = first.resources.iter().any(|r| {
        r.depends_on
            .iter()
            .any(|dep| known.contains_key(dep) && !generated.contains_key(dep))
    });
    let loaded = if needs_second {
        tfconfig::load_with_known(input, &known)
    } else {
        first
    };
    if loaded.has_errors() {
        bail!("{}", loaded.render_diagnostics());
    }
    desired::build(&loaded.resources).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(|e| format!("Error: {e}")).collect();
        anyhow::anyhow!("{}", lines.join("\n"))
    })
}

/// The input of a load of `dir` (relative to its checkout).
pub fn input(dir: &std::path::Path, workspace: &str, vars: Vec<tfconfig::CliVar>) -> Input {
    let checkout = tfconfig::find_checkout(dir);
    let absolute = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let project_dir = absolute
        .strip_prefix(&checkout)
        .map(PathBuf::from)
        .unwrap_or_default();
    Input {
        checkout,
        project_dir,
        workspace: workspace.to_owned(),
        vars,
        limits: tfconfig::Limits::default(),
    }
}

/// State, configuration, refresh, adoption, plan and guard.
pub async fn prepare(
    api: &dyn ProxmoxApi,
    state: &StateHandle,
    input: &Input,
    protect: &Protect,
) -> anyhow::Result<Prepared> {
    let project_state = state.load().await.context("reading atoll's state")?;
    // Evaluate the configuration while the cluster is read.
    let loading = {
        let (input, known) = (input.clone(), project_state.clone());
        tokio::task::spawn_blocking(move || load_desired(&input, &known))
    };
    let refreshed = refresh_state(api, &project_state.entries).await;
    let desired = loading.await.context("evaluating the configuration")??;
    let mut refreshed = refreshed?;
    refreshed
        .complete(api, &project_state.entries, &desired.resources)
        .await?;
    let (inventory, protected) = protected_inventory(api, protect, refreshed).await?;
    let adopted = adopt(&project_state.entries, &desired.resources, &inventory);
    let mut entries = project_state.entries.clone();
    entries.extend(adopted.iter().cloned());
    let source = PlanSource {
        sha: String::new(),
        config_hash: desired.config_hash(),
        state_fingerprint: project_state.fingerprint.clone(),
        ..PlanSource::default()
    };
    let mut plan = plan::plan(PlanInput {
        desired: &desired.resources,
        state: &entries,
        inventory: &inventory,
        source: &source,
    })
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    add_generated(&mut plan, &desired, &project_state);
    guard::check(&mut plan, &protected, protect.policy, &desired.resources);
    plan.source.refreshed = plan::observe(&plan, &project_state.fingerprint, &inventory);
    plan.source.state_fingerprint = plan::state_fingerprint(&plan.source.refreshed);
    Ok(Prepared {
        state: project_state,
        desired,
        adopted,
        plan,
        protected,
        inventory,
    })
}

/// Finds the protected guests, reads the config of those the refresh did not read yet (the
/// guard needs their network identity), and resolves them again with it.
async fn protected_inventory(
    api: &dyn ProxmoxApi,
    protect: &Protect,
    mut refreshed: Partial,
) -> anyhow::Result<(Inventory, ProtectedSet)> {
    let own = own_guest(api, protect).await?;
    let first = ProtectedSet::resolve(
        &protect.guests,
        own.as_ref(),
        refreshed.inventory().guests.values(),
    );
    refreshed.read_more(api, first.vm_ids()).await?;
    let inventory = refreshed.into_inventory();
    let protected = ProtectedSet::resolve(&protect.guests, own.as_ref(), inventory.guests.values());
    Ok((inventory, protected))
}

/// atoll's own guest, when discovery is on and finds exactly one.
async fn own_guest(api: &dyn ProxmoxApi, protect: &Protect) -> anyhow::Result<Option<SelfGuest>> {
    if !protect.discover {
        return Ok(None);
    }
    let local = if protect.local_macs.is_empty() {
        LocalMacs::default()
    } else {
        let macs: Result<Vec<Mac>, _> = protect.local_macs.iter().map(|m| m.parse()).collect();
        LocalMacs::Fixed(macs.map_err(|e| anyhow::anyhow!("protect.local_macs: {e}"))?)
    };
    match discover_self(api, &local)
        .await
        .context("finding atoll's own guest (protect.discover)")?
    {
        Ok(found) => Ok(Some(SelfGuest {
            vm_id: found.vmid.get(),
            node: found.node.to_string(),
            mac: found
                .matched
                .first()
                .map(ToString::to_string)
                .unwrap_or_default(),
        })),
        Err(NoMatch::NoGuest { .. } | NoMatch::NoLocalMacs) => Ok(None),
        Err(ambiguous) => bail!("finding atoll's own guest: {ambiguous}"),
    }
}

/// Generated values not in state yet show as creates, their value hidden.
fn add_generated(plan: &mut Plan, desired: &DesiredState, state: &ProjectState) {
    for generated in &desired.generated {
        if state
            .generated
            .iter()
            .any(|g| g.address == generated.address)
        {
            continue;
        }
        let mut attributes: Vec<AttributeChange> = generated
            .arguments
            .iter()
            .map(|(name, value)| attribute(name, Json::Null, Json::from(value.clone())))
            .collect();
        let mut result = attribute("result", Json::Null, Json::Null);
        result.after_sensitive = generated.resource_type == "random_password";
        result.after_unknown = !result.after_sensitive;
        attributes.push(result);
        plan.resource_changes.push(ResourceChange {
            address: generated.address.clone(),
            resource_type: generated.resource_type.clone(),
            node: String::new(),
            vm_id: None,
            actions: vec![Action::Create],
            disruption: None,
            blocked: None,
            attributes,
            kind: None,
            guest_name: None,
            power: None,
            drift: Drift::default(),
            uses: Vec::new(),
        });
    }
    plan.resource_changes
        .sort_by(|a, b| a.address.cmp(&b.address));
    plan.recount();
}

fn attribute(path: &str, before: Json, after: Json) -> AttributeChange {
    AttributeChange {
        path: path.to_owned(),
        before,
        after,
        effect: None,
        pve_key: path.to_owned(),
        before_sensitive: false,
        after_sensitive: false,
        after_unknown: false,
    }
}
