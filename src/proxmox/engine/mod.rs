//! The one entry point to Proxmox VE: load a project, refresh the cluster, adopt guests
//! missing from state, plan, guard, settle state and apply. `atoll plan/apply` and the server's
//! runner are thin adapters over [`Engine`]; nothing else calls the planner, the guard or the
//! executor. Its futures are `Send`, so the runner drives them in the job's own task.

mod computed;
mod data;
mod error;
mod import;
mod moves;
mod options;
mod owner;
mod settings;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use secrecy::ExposeSecret as _;
use serde_json::Value as Json;

pub use error::EngineError;
pub use import::{CommandImport, import_one};
pub use moves::renames_for;
pub use options::{TARGETING_WARNING, input_vars};
pub use owner::refuse_foreign;
pub use settings::Protect;

use crate::proxmox::apply::{ApplyEvent, ApplySettings, Executor, Now, adopt, entry_for};
use crate::proxmox::client::ProxmoxApi;
use crate::proxmox::desired::{self, DesiredState, Generated, generate};
use crate::proxmox::discover::{LocalMacs, NoMatch, SelfGuest as DiscoveredGuest, discover_self};
use crate::proxmox::guard::{self, ProtectedSet, SelfGuest};
use crate::proxmox::inventory::{Partial, refresh_state};
use crate::proxmox::plan::{
    self, Action, AttributeChange, Desired, Importing, Inventory, Plan, PlanInput, PlanSource,
    ResourceChange, StateEntry,
};
use crate::proxmox::sftp::SftpSettings;
use crate::proxmox::state::{GeneratedEntry, GeneratedValues, ProjectState, StateHandle, secrets};
use crate::proxmox::types::Mac;
use tfconfig::Input;

/// The Proxmox VE client and the guard's settings: everything a plan or an apply needs besides
/// the project. Cheap to clone; one per server, shared by every job.
#[derive(Debug, Clone)]
pub struct Engine {
    api: Arc<dyn ProxmoxApi>,
    protect: Protect,
    sftp: Option<SftpSettings>,
}

impl Engine {
    pub fn new(api: Arc<dyn ProxmoxApi>, protect: Protect) -> Self {
        Self {
            api,
            protect,
            sftp: None,
        }
    }

    /// With SSH access to the nodes (`proxmox.ssh`), for snippets.
    #[must_use]
    pub fn with_sftp(mut self, sftp: Option<SftpSettings>) -> Self {
        self.sftp = sftp;
        self
    }

    /// The guard's settings.
    pub fn protect(&self) -> &Protect {
        &self.protect
    }

    /// State, configuration, refresh, adoption, plan and guard, for one project.
    pub async fn prepare(
        &self,
        state: &StateHandle,
        input: &Input,
    ) -> Result<Prepared, EngineError> {
        let options = model::PlanOptions::default();
        prepare(self.api.as_ref(), state, input, &self.protect, &options).await
    }

    /// [`Engine::prepare`] honouring `options` (`-target`, `-replace`, `-destroy`; the
    /// variables must already be in `input`). The plan records them.
    pub async fn prepare_with(
        &self,
        state: &StateHandle,
        input: &Input,
        options: &model::PlanOptions,
    ) -> Result<Prepared, EngineError> {
        prepare(self.api.as_ref(), state, input, &self.protect, options).await
    }

    /// Refuses `plan` (a saved one, or the one just made) if the guard would block any of its
    /// changes now: protected guests are found again before every apply.
    pub fn recheck(&self, plan: &Plan, prepared: &Prepared) -> Result<(), EngineError> {
        let desired = &prepared.desired.resources;
        guard::recheck(plan, &prepared.protected, self.protect.policy, desired)?;
        Ok(())
    }

    /// Refuses a saved plan that no longer matches the state, the cluster or the
    /// configuration, or that the guard would now block.
    pub fn check_saved(&self, saved: &Plan, prepared: &Prepared) -> Result<(), EngineError> {
        crate::proxmox::apply::check_fresh(saved, &prepared.now())?;
        self.recheck(saved, prepared)
    }

    /// Before the first change: record adopted guests, generate missing values, and reload the
    /// configuration so they are known. Returns the configuration to apply.
    pub async fn settle(
        &self,
        state: &StateHandle,
        input: &Input,
        prepared: &Prepared,
    ) -> Result<DesiredState, EngineError> {
        settle_state(state, input, prepared).await
    }

    /// The executor of one apply; `events` hears every step as it happens.
    pub fn executor<'a>(
        &'a self,
        state: &'a StateHandle,
        settings: ApplySettings,
        events: &'a (dyn Fn(&ApplyEvent) + Send + Sync),
    ) -> Executor<'a> {
        Executor {
            api: self.api.as_ref(),
            state,
            settings,
            events,
            sftp: self.sftp.as_ref(),
        }
    }
}

/// Everything a plan was made from, kept for apply.
#[derive(Debug)]
pub struct Prepared {
    pub state: ProjectState,
    pub desired: DesiredState,
    /// Guests adopted into state and objects imported by `import` blocks (not yet written).
    pub adopted: Vec<StateEntry>,
    pub plan: Plan,
    pub protected: ProtectedSet,
    /// What the refresh read.
    pub inventory: Inventory,
    /// The data sources' answers the configuration was evaluated with, by address; apply
    /// evaluates it again with the same.
    pub data: tfconfig::Known,
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

/// Loads and evaluates the configuration with the values known from `state`. A generated
/// value whose replace-forcing arguments changed is evaluated as unknown: it is generated
/// anew at apply, so what uses it is known only then; one updated in place keeps its values
/// but those that follow the update ([`desired::follows_update`]). What reads a changed value
/// may change in turn (a keeper that reads a replaced password): evaluated again until no more
/// change, at most once per generated resource.
///
/// Without the cluster, a configuration that reads data sources is refused
/// ([`EngineError::DataSource`]); [`load_desired_with`] takes their answers.
pub fn load_desired(input: &Input, state: &ProjectState) -> Result<DesiredState, EngineError> {
    load_desired_with(input, state, &tfconfig::Known::new())
}

/// [`load_desired`] with the data sources' answers, by address.
pub fn load_desired_with(
    input: &Input,
    state: &ProjectState,
    answers: &tfconfig::Known,
) -> Result<DesiredState, EngineError> {
    let mut generated = state.generated_values();
    let mut desired = evaluate(input, &generated, answers)?;
    let mut seen = BTreeMap::new();
    for _ in 0..=state.generated.len() {
        let changed = changed_generated(&desired, state);
        if changed == seen {
            break;
        }
        for (address, replaced) in &changed {
            if *replaced {
                generated.remove(address);
            } else if let Some(values) = generated.get_mut(address) {
                for name in desired::follows_update(&values.resource_type) {
                    values.values.remove(*name);
                }
            }
        }
        desired = evaluate(input, &generated, answers)?;
        seen = changed;
    }
    Ok(desired)
}

/// The generated resources in state that the configuration now asks differently of, and
/// whether each is replaced (`true`) or updated in place.
fn changed_generated(desired: &DesiredState, state: &ProjectState) -> BTreeMap<String, bool> {
    desired
        .generated
        .iter()
        .filter_map(|g| {
            let stored = state.generated.iter().find(|s| s.address == g.address)?;
            renewal(g, stored).map(|replaced| (g.address.clone(), replaced))
        })
        .collect()
}

/// Whether the stored value is made anew (`Some(true)`: a replace-forcing argument changed, or
/// it is [`due`]), updated in place (`Some(false)`) or kept as it is (`None`).
fn renewal(desired: &Generated, stored: &GeneratedEntry) -> Option<bool> {
    let changed = changed_arguments(desired, stored);
    if due(stored).is_some() {
        return Some(true);
    }
    (!changed.is_empty()).then(|| desired::replaces(&desired.resource_type, changed))
}

/// Why the stored value is made anew although the configuration asks for it still: a
/// `time_rotating` whose rotation time has passed now, a certificate ready for renewal.
fn due(stored: &GeneratedEntry) -> Option<String> {
    let values: BTreeMap<&str, &str> = stored
        .values
        .0
        .iter()
        .map(|(name, value)| (name.as_str(), value.expose_secret()))
        .collect();
    desired::due(
        &stored.resource_type,
        &values,
        &stored.arguments,
        time::OffsetDateTime::now_utc(),
    )
}

/// What the plan says of a change besides its attributes: that it is due, that the apply
/// will wait.
fn change_notes(
    generated: &Generated,
    stored: Option<&GeneratedEntry>,
    actions: &[Action],
) -> Vec<String> {
    let mut notes: Vec<String> = stored.and_then(due).into_iter().collect();
    let replacing = actions == [Action::Delete, Action::Create];
    let destroy = stored
        .filter(|_| replacing)
        .map_or(std::time::Duration::ZERO, |s| {
            desired::wait(&s.resource_type, &s.arguments, true)
        });
    if !destroy.is_zero() {
        notes.push(format!(
            "apply will wait {} before destroying it (destroy_duration)",
            seconds(destroy)
        ));
    }
    let create = desired::wait(&generated.resource_type, &generated.arguments, false);
    if actions.contains(&Action::Create) && !create.is_zero() {
        notes.push(format!(
            "apply will wait {} after creating it (create_duration), before it changes the \
             cluster",
            seconds(create)
        ));
    }
    notes
}

fn seconds(wait: std::time::Duration) -> String {
    format!("{}s", wait.as_secs_f64())
}

/// The arguments the configuration sets differently from those stored. An optional computed
/// argument (`time_static.rfc3339`) that the configuration leaves out evaluates to the stored
/// value itself; that is no change.
fn changed_arguments<'a>(desired: &'a Generated, stored: &'a GeneratedEntry) -> Vec<&'a str> {
    let names: BTreeSet<&String> = desired
        .arguments
        .keys()
        .chain(stored.arguments.keys())
        .chain(&desired.pending)
        .collect();
    names
        .into_iter()
        .filter(|name| {
            let (want, had) = (desired.arguments.get(*name), stored.arguments.get(*name));
            let same = want == had
                || (had.is_none()
                    && want.is_some_and(|want| {
                        stored
                            .values
                            .0
                            .get(*name)
                            .is_some_and(|value| value.expose_secret() == want)
                    }));
            !same || desired.pending.contains(name)
        })
        .map(String::as_str)
        .collect()
}

fn evaluate(
    input: &Input,
    generated: &BTreeMap<String, GeneratedValues>,
    answers: &tfconfig::Known,
) -> Result<DesiredState, EngineError> {
    let with_answers = |mut known: tfconfig::Known| {
        known.extend(answers.iter().map(|(k, v)| (k.clone(), v.clone())));
        known
    };
    let first =
        tfconfig::load_with_known(input, &with_answers(desired::known_values(&[], generated)));
    if first.has_errors() {
        return Err(EngineError::Config(first.render_diagnostics()));
    }
    if let Some(read) = first.data_reads.first() {
        return Err(EngineError::DataSource {
            address: read.address.clone(),
            declared_at: read.declared_at.clone(),
        });
    }
    // Download ids are known before apply: evaluate again with them when anything uses one.
    let known = with_answers(desired::known_values(&first.resources, generated));
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
        return Err(EngineError::Config(loaded.render_diagnostics()));
    }
    let mut desired = desired::build(&loaded.resources).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(|e| format!("Error: {e}")).collect();
        EngineError::Config(lines.join("\n"))
    })?;
    desired.warnings = loaded.render_warnings();
    desired.outputs = loaded.outputs;
    desired.imports = loaded.imports;
    desired.moves = loaded.moves;
    desired.removals = loaded.removals;
    desired.depends_on = loaded
        .resources
        .iter()
        .map(|r| (r.address.clone(), r.depends_on.clone()))
        .collect();
    Ok(desired)
}

async fn prepare(
    api: &dyn ProxmoxApi,
    state: &StateHandle,
    input: &Input,
    protect: &Protect,
    options: &model::PlanOptions,
) -> Result<Prepared, EngineError> {
    let mut project_state = state.load().await?;
    // Evaluate the configuration while the cluster is read.
    let loading = {
        let (input, known) = (input.clone(), project_state.clone());
        tokio::task::spawn_blocking(move || load_desired(&input, &known))
    };
    let refreshed = refresh_state(api, &project_state.entries).await;
    let loaded = loading
        .await
        .map_err(|e| EngineError::Interrupted(e.to_string()))?;
    let mut refreshed = refreshed?;
    let (mut desired, mut data) = match loaded {
        Err(EngineError::DataSource { .. }) => {
            let guests = data::guests(refreshed.cluster());
            let generated = desired::known_values(&[], &project_state.generated_values());
            let answers = data::answer_all(api, input, &generated, guests).await?;
            let (input, known) = (input.clone(), project_state.clone());
            tokio::task::spawn_blocking(move || {
                Ok((load_desired_with(&input, &known, &answers)?, answers))
            })
            .await
            .map_err(|e| EngineError::Interrupted(e.to_string()))?
        }
        loaded => loaded.map(|desired| (desired, tfconfig::Known::new())),
    }?;
    // `moved` blocks rename state before anything is compared; a generated value under its
    // new address is known to the configuration again.
    let renames = moves::resolve(&desired.moves, &project_state)?;
    moves::rename(&mut project_state, &renames);
    if moves::touches_generated(&project_state, &renames) {
        let (input, known, answers) = (input.clone(), project_state.clone(), data.clone());
        desired = tokio::task::spawn_blocking(move || load_desired_with(&input, &known, &answers))
            .await
            .map_err(|e| EngineError::Interrupted(e.to_string()))??;
    }
    refreshed
        .complete(api, &project_state.entries, &desired.resources)
        .await?;
    let (inventory, protected) = protected_inventory(api, protect, refreshed).await?;
    let protected = crate::proxmox::inventory::with_own_access(
        api,
        protected,
        &project_state.entries,
        &desired.resources,
    )
    .await?;
    if computed::has_unknowns(&desired) {
        let addresses =
            computed::container_addresses(api, &project_state.entries, &inventory).await?;
        if !addresses.is_empty() {
            data.extend(addresses);
            let (input, known, answers) = (input.clone(), project_state.clone(), data.clone());
            desired =
                tokio::task::spawn_blocking(move || load_desired_with(&input, &known, &answers))
                    .await
                    .map_err(|e| EngineError::Interrupted(e.to_string()))??;
        }
    }
    let owner_tag = state.owner_tag();
    owner::stamp(&mut desired, &owner_tag);
    let imported = import::resolve(
        &desired.imports,
        &project_state.entries,
        &desired.resources,
        &inventory,
    )?;
    if !options.destroy {
        let claims = owner::claims(&desired.resources, imported.iter().map(|i| &i.entry));
        owner::refuse_foreign(state, &project_state.entries, &claims, &inventory).await?;
    }
    let mut entries = project_state.entries.clone();
    entries.extend(imported.iter().map(|i| i.entry.clone()));
    let mut adopted = adopt(&entries, &desired.resources, &inventory, &owner_tag);
    entries.extend(adopted.iter().cloned());
    let source = PlanSource {
        sha: String::new(),
        config_hash: desired.config_hash(),
        state_fingerprint: project_state.fingerprint.clone(),
    };
    let (scoped, scoped_entries) =
        options::scope(options, &desired.resources, &entries, &desired.depends_on);
    let mut plan = plan::plan(PlanInput {
        desired: &scoped,
        state: &scoped_entries,
        inventory: &inventory,
        source: &source,
    })?;
    options::force_replace(&mut plan, options);
    for import in &imported {
        if let Some(change) = plan
            .resource_changes
            .iter_mut()
            .find(|c| c.address == import.entry.address())
        {
            change.importing = Some(Importing {
                id: import.id.clone(),
            });
        }
    }
    plan.recount();
    adopted.extend(imported.into_iter().map(|i| i.entry));
    if !options.destroy {
        add_generated(&mut plan, &desired, &project_state);
    }
    if !options.targets.is_empty() {
        let instances = desired.depends_on.keys().map(String::as_str);
        let kept = options::targeted(options, instances, &desired.depends_on);
        // guests and objects were scoped before the diff; generated values are added after
        plan.resource_changes.retain(|c| {
            !desired::is_generated(&c.resource_type)
                || kept.contains(&c.address)
                || options.targets.iter().any(|t| t.covers(&c.address))
        });
        plan.recount();
        desired.warnings.push(TARGETING_WARNING.to_owned());
    }
    let warnings = moves::mark(&mut plan, &project_state, &renames, &desired.removals);
    desired.warnings.extend(warnings);
    plan.options = options.clone();
    guard::check(&mut plan, &protected, protect.policy, &desired.resources);
    plan.refreshed = plan::observe(&plan, &project_state.fingerprint, &inventory);
    plan.source.state_fingerprint = plan::state_fingerprint(&plan.refreshed);
    Ok(Prepared {
        state: project_state,
        desired,
        adopted,
        plan,
        protected,
        inventory,
        data,
    })
}

/// Finds the protected guests, reads the config of those the refresh did not read yet (the
/// guard needs their network identity), and resolves them again with it.
async fn protected_inventory(
    api: &dyn ProxmoxApi,
    protect: &Protect,
    mut refreshed: Partial,
) -> Result<(Inventory, ProtectedSet), EngineError> {
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

/// What discovery finds now: the guest holding one of this machine's MACs (or the configured
/// `protect.local_macs`), or why none or several do. The guard and the dashboard's protected
/// guests page both ask here.
pub async fn discover(
    api: &dyn ProxmoxApi,
    protect: &Protect,
) -> Result<Result<DiscoveredGuest, NoMatch>, EngineError> {
    let local = if protect.local_macs.is_empty() {
        LocalMacs::default()
    } else {
        let macs: Result<Vec<Mac>, _> = protect.local_macs.iter().map(|m| m.parse()).collect();
        LocalMacs::Fixed(
            macs.map_err(|e| EngineError::Protect(format!("protect.local_macs: {e}")))?,
        )
    };
    Ok(discover_self(api, &local).await?)
}

/// atoll's own guest, when discovery is on and finds exactly one.
async fn own_guest(
    api: &dyn ProxmoxApi,
    protect: &Protect,
) -> Result<Option<SelfGuest>, EngineError> {
    if !protect.discover {
        return Ok(None);
    }
    match discover(api, protect).await? {
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
        Err(ambiguous) => Err(EngineError::Protect(format!(
            "finding atoll's own guest (protect.discover): {ambiguous}"
        ))),
    }
}

/// Generated values in the plan: created when not in state, replaced when a replace-forcing
/// argument changed, updated in place when only another did, destroyed when no longer
/// declared; their values are never shown.
fn add_generated(plan: &mut Plan, desired: &DesiredState, state: &ProjectState) {
    for generated in &desired.generated {
        let stored = state
            .generated
            .iter()
            .find(|g| g.address == generated.address);
        let (actions, before) = match stored {
            None => (vec![Action::Create], None),
            Some(s) => match renewal(generated, s) {
                None => continue,
                Some(true) => (vec![Action::Delete, Action::Create], Some(&s.arguments)),
                Some(false) => (vec![Action::Update], Some(&s.arguments)),
            },
        };
        let mut attributes = argument_changes(generated, before);
        attributes.extend(computed_changes(generated, &actions, before.is_some()));
        let notes = change_notes(generated, stored, &actions);
        let mut change = generated_change(
            &generated.address,
            &generated.resource_type,
            actions,
            attributes,
        );
        change.notes = notes;
        plan.resource_changes.push(change);
    }
    for stored in &state.generated {
        if desired
            .generated
            .iter()
            .any(|g| g.address == stored.address)
        {
            continue;
        }
        let attributes = stored
            .arguments
            .iter()
            .map(|(name, value)| {
                let shown = desired::shown_argument(&stored.resource_type, name, value);
                let mut change = attribute(name, shown.clone().unwrap_or(Json::Null), Json::Null);
                change.before_sensitive = shown.is_none();
                change
            })
            .collect();
        let mut change = generated_change(
            &stored.address,
            &stored.resource_type,
            vec![Action::Delete],
            attributes,
        );
        let wait = desired::wait(&stored.resource_type, &stored.arguments, true);
        if !wait.is_zero() {
            change.notes.push(format!(
                "apply will wait {} before destroying it (destroy_duration)",
                seconds(wait)
            ));
        }
        plan.resource_changes.push(change);
    }
    plan.resource_changes
        .sort_by(|a, b| a.address.cmp(&b.address));
    plan.recount();
}

/// The configured arguments that change (all of them on create), each shown as the plan
/// shows it: a sensitive one never, a pending one as known after apply.
fn argument_changes(
    generated: &Generated,
    before: Option<&BTreeMap<String, String>>,
) -> Vec<AttributeChange> {
    let names: BTreeSet<&String> = generated
        .arguments
        .keys()
        .chain(&generated.pending)
        .chain(before.into_iter().flat_map(BTreeMap::keys))
        .collect();
    let shown = |name: &str, text: Option<&String>| {
        text.map(|t| desired::shown_argument(&generated.resource_type, name, t))
    };
    names
        .into_iter()
        .filter_map(|name| {
            let pending = generated.pending.contains(name);
            let was = before.map(|b| b.get(name));
            let after = generated.arguments.get(name);
            if !pending && was.is_some_and(|was| was == after) {
                return None;
            }
            let (was, after) = (shown(name, was.flatten()), shown(name, after));
            let mut change = attribute(
                name,
                was.clone().flatten().unwrap_or(Json::Null),
                after.clone().flatten().unwrap_or(Json::Null),
            );
            change.before_sensitive = matches!(was, Some(None));
            change.after_sensitive = matches!(after, Some(None));
            change.after_unknown = pending;
            Some(change)
        })
        .collect()
}

/// What the apply computes, known after it (or sensitive): every computed attribute on create
/// or replace, those that follow the update on an update in place.
fn computed_changes(
    generated: &Generated,
    actions: &[Action],
    stored: bool,
) -> Vec<AttributeChange> {
    let kind = generated.resource_type.as_str();
    let names = if actions == [Action::Update] {
        desired::follows_update(kind)
    } else {
        desired::computed(kind)
    };
    // A value of any type follows an argument of any type (`output` is `input`): absent with
    // it, and sensitive when it holds a sensitive value.
    let dynamic_input = generated.arguments.iter().find(|(name, _)| {
        desired::is_dynamic(kind, name) && !desired::replaces(kind, [name.as_str()])
    });
    let sensitive_input = dynamic_input
        .is_some_and(|(name, text)| desired::shown_argument(kind, name, text).is_none());
    names
        .iter()
        .filter(|name| !desired::is_dynamic(kind, name) || dynamic_input.is_some())
        .map(|name| {
            let mut value = attribute(name, Json::Null, Json::Null);
            value.after_sensitive = desired::is_sensitive(kind, name)
                || (desired::is_dynamic(kind, name) && sensitive_input);
            value.after_unknown = !value.after_sensitive;
            value.before_sensitive = stored && value.after_sensitive;
            value
        })
        .collect()
}

fn generated_change(
    address: &str,
    resource_type: &str,
    actions: Vec<Action>,
    attributes: Vec<AttributeChange>,
) -> ResourceChange {
    let mut change = ResourceChange::no_op(address, resource_type, "");
    change.actions = actions;
    change.attributes = attributes;
    change
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

/// Writes what this run adopted to state: guests found by VMID and marker (in full when they
/// already match), and what `import` blocks take over, as the cluster holds it.
pub async fn record_adopted(state: &StateHandle, prepared: &Prepared) -> Result<(), EngineError> {
    for adopted in &prepared.adopted {
        let desired = prepared.desired.resources.iter().find_map(|d| match d {
            Desired::Guest(g) if g.address == adopted.address() => Some(g),
            _ => None,
        });
        // Only a guest that already matches is recorded in full; one with changes is recorded
        // bare, and in full once its update has run.
        let matches = prepared
            .plan
            .resource_changes
            .iter()
            .any(|c| c.address == adopted.address() && c.is_no_op());
        let entry = match (desired.filter(|_| matches), adopted) {
            (Some(guest), StateEntry::Guest { vm_id, node, .. }) => {
                let mut entry = entry_for(guest, *vm_id);
                if let StateEntry::Guest { node: n, .. } = &mut entry {
                    n.clone_from(node);
                }
                entry
            }
            _ => adopted.clone(),
        };
        state.record(&entry).await?;
    }
    Ok(())
}

/// Before the first change: record adopted guests, generate missing values, and reload the
/// configuration so they are known.
async fn settle_state(
    state: &StateHandle,
    input: &Input,
    prepared: &Prepared,
) -> Result<DesiredState, EngineError> {
    moves::persist(state, &prepared.plan).await?;
    record_adopted(state, prepared).await?;
    let mut desired = prepared.desired.clone();
    let mut stored = prepared.state.clone();
    let mut renewed = BTreeSet::new();
    // Round by round: what reads another generated value is made once that value is.
    for _ in 0..=desired.generated.len() {
        let mut made = false;
        for generated in desired.generated.iter().filter(|g| g.pending.is_empty()) {
            let current = stored
                .generated
                .iter()
                .find(|g| g.address == generated.address);
            // A value made anew in this apply is not due again (a rotation that has passed).
            let renewal = match current {
                None => Some(true),
                Some(_) if renewed.contains(&generated.address) => None,
                Some(current) => renewal(generated, current),
            };
            let Some(replace) = renewal else {
                continue;
            };
            if replace {
                wait_for_sleep(generated, current).await;
            }
            let entry = generate_entry(generated, current, replace).await?;
            state.record_generated(&entry).await?;
            renewed.insert(generated.address.clone());
            made = true;
        }
        if !made {
            break;
        }
        stored = state.load().await?;
        desired = load_desired_with(input, &stored, &prepared.data)?;
    }
    if let Some(waiting) = desired.generated.iter().find(|g| !g.pending.is_empty()) {
        return Err(EngineError::Generate {
            address: waiting.address.clone(),
            why: format!(
                "{} could not be known before the cluster changes",
                waiting.pending.join(", ")
            ),
        });
    }
    owner::stamp(&mut desired, &state.owner_tag());
    Ok(desired)
}

/// Generates the values of one resource, off the async workers (an RSA key takes a while). An
/// update in place (only what the schema does not replace on changed) keeps the stored values
/// but those that follow it, as `terraform_data` keeps its `id`.
async fn generate_entry(
    generated: &Generated,
    current: Option<&GeneratedEntry>,
    replace: bool,
) -> Result<GeneratedEntry, EngineError> {
    let making = generated.clone();
    let mut values = tokio::task::spawn_blocking(move || generate(&making))
        .await
        .map_err(|e| EngineError::Interrupted(e.to_string()))?
        .map_err(|why| EngineError::Generate {
            address: generated.address.clone(),
            why,
        })?;
    if let Some(current) = current
        && !replace
    {
        let follows = desired::follows_update(&generated.resource_type);
        let mut kept: BTreeMap<String, String> = current
            .values
            .0
            .iter()
            .filter(|(name, _)| !follows.contains(&name.as_str()))
            .map(|(name, value)| (name.clone(), value.expose_secret().to_owned()))
            .collect();
        values.retain(|name, _| follows.contains(&name.as_str()));
        kept.extend(values);
        values = kept;
    }
    Ok(GeneratedEntry {
        address: generated.address.clone(),
        resource_type: generated.resource_type.clone(),
        arguments: generated.arguments.clone(),
        values: secrets(values),
    })
}

/// A `time_sleep` made or made anew: the apply waits its `destroy_duration` (of the stored
/// one it replaces) and its `create_duration`, on the runtime's timer, before anything reads it
/// or the cluster changes.
async fn wait_for_sleep(generated: &Generated, current: Option<&GeneratedEntry>) {
    let destroy = current.map_or(std::time::Duration::ZERO, |c| {
        desired::wait(&c.resource_type, &c.arguments, true)
    });
    let create = desired::wait(&generated.resource_type, &generated.arguments, false);
    let wait = destroy + create;
    if !wait.is_zero() {
        tracing::info!(address = %generated.address, wait_secs = wait.as_secs_f64(), "time_sleep: waiting");
        tokio::time::sleep(wait).await;
    }
}

/// The engine's futures are `Send`, so a server task can drive them (checked when compiling).
#[allow(dead_code)]
fn futures_are_send(
    engine: &Engine,
    state: &StateHandle,
    input: &Input,
    prepared: &Prepared,
    plan: &Plan,
    desired: &DesiredState,
) {
    fn send<T: Send>(_: T) {}
    send(engine.prepare(state, input));
    send(engine.settle(state, input, prepared));
    let events = |_: &ApplyEvent| {};
    send(
        engine
            .executor(state, ApplySettings::default(), &events)
            .execute(plan, desired),
    );
}
