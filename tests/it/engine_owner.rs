//! Ownership: every guest atoll creates carries `atoll` and its project's owner tag; two
//! projects on one store and one cluster that declare the same VMID do not share the guest:
//! the second plan (and apply, and `import` block) fails naming the owner, and the cluster
//! is left as it was. The marker tags are bookkeeping the plan never shows.

use crate::engine_support;

use crate::support::Container;
use atoll::proxmox::owner::owner_tag;
use atoll::store::StateScope;
use engine_support::{Env, text};

const ACME: &str = "github.com/acme/infra";
const WEB: &str = "proxmox_virtual_environment_container.web";

fn acme() -> StateScope {
    StateScope {
        repo: ACME.to_owned(),
        project_dir: "stack".to_owned(),
        workspace: "default".to_owned(),
    }
}

fn local() -> StateScope {
    StateScope {
        repo: "local".to_owned(),
        ..acme()
    }
}

/// `atoll plan` as the `local` project (the CLI's default repository); it must fail.
async fn refused(env: &Env, args: &[&str]) -> String {
    let out = env.atoll(args).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    text(&out)
}

fn ct_500_owned_by_acme() -> String {
    format!(
        "CT 500 already exists on node pve, managed by {ACME} stack (default); choose another \
         vm_id or move it with a moved block / atoll state mv"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_project_with_the_same_vm_id_is_refused_naming_the_owner() {
    let env = Env::start().await;
    env.write_tf(&Container::new("web").vm_id(500).hcl());
    let out = env
        .atoll(&["apply", "--auto-approve", "--repo", ACME])
        .await;
    assert!(out.status.success(), "{}", text(&out));
    let tags = env.live_config(500).await["tags"].clone();
    assert_eq!(tags, format!("atoll;{}", owner_tag(&acme())));
    assert_ne!(owner_tag(&acme()), owner_tag(&local()));

    // the owner plans "No changes."; its markers are no change
    let again = env.atoll(&["plan", "--repo", ACME]).await;
    assert!(text(&again).contains("No changes."), "{}", text(&again));

    // the `local` project declares the same VMID: plan and apply refuse, naming acme's
    let before = env.live_config(500).await;
    let events = env.sim.guest_events(500).len();
    assert!(
        refused(&env, &["plan"])
            .await
            .contains(&ct_500_owned_by_acme())
    );
    assert!(
        refused(&env, &["apply", "--auto-approve"])
            .await
            .contains(&ct_500_owned_by_acme())
    );
    // an import block for it is refused the same way
    let import = format!("import {{\n  to = {WEB}\n  id = \"pve/500\"\n}}\n");
    env.write_tf(&format!(
        "{}\n{import}",
        Container::new("web").vm_id(500).hcl()
    ));
    assert!(
        refused(&env, &["plan"])
            .await
            .contains(&ct_500_owned_by_acme())
    );
    assert_eq!(
        env.live_config(500).await,
        before,
        "the cluster is unchanged"
    );
    assert_eq!(
        env.sim.guest_events(500).len(),
        events,
        "nothing was done to it"
    );
    let listed = env.atoll(&["state", "list"]).await;
    assert!(!text(&listed).contains("vm_id=500"), "{}", text(&listed));

    // a guest made before owner tags (only `atoll`) is still acme's: the store says so
    set_tags(&env, 500, "atoll").await;
    env.write_tf(&Container::new("web").vm_id(500).hcl());
    assert!(
        refused(&env, &["plan"])
            .await
            .contains(&ct_500_owned_by_acme())
    );
    assert_eq!(env.live_config(500).await["tags"], "atoll", "left alone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_tag_the_store_does_not_know_is_named_and_refused() {
    let env = Env::start().await;
    env.write_tf(&Container::new("web").vm_id(501).hcl());
    let gone = "github.com/gone/project";
    let out = env
        .atoll(&["apply", "--auto-approve", "--repo", gone])
        .await;
    assert!(out.status.success(), "{}", text(&out));
    let scope = StateScope {
        repo: gone.to_owned(),
        ..acme()
    };
    // that project forgets the guest and holds nothing any more
    let store = atoll::store::connect(&env.store_url())
        .await
        .expect("store");
    let state = atoll::proxmox::state::StateHandle::new(store, scope.clone());
    assert!(state.forget(WEB).await.expect("forget"));
    let tag = owner_tag(&scope);
    let said = refused(&env, &["plan"]).await;
    assert!(
        said.contains(&format!(
            "CT 501 already exists on node pve, managed by an atoll project this server's \
             store does not know (owner tag {tag}); choose another vm_id, or, if that project \
             is gone, remove the tag from the guest and import it"
        )),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn own_guest_missing_from_state_is_adopted_and_markers_lost_on_the_guest_are_no_change() {
    let env = Env::start().await;
    env.write_tf(
        &Container::new("web")
            .vm_id(502)
            .body("  tags = [\"web\"]")
            .hcl(),
    );
    env.apply().await;
    let own = owner_tag(&local());
    assert_eq!(
        env.live_config(502).await["tags"],
        format!("atoll;{own};web")
    );
    let forgotten = env.state().await.forget(WEB).await.expect("forget");
    assert!(forgotten);
    let plan = env.plan().await;
    assert!(plan.contains("No changes."), "adopted: {plan}");
    env.apply().await;
    let listed = env.atoll(&["state", "list"]).await;
    assert!(text(&listed).contains("vm_id=502"), "{}", text(&listed));

    // tags edited by hand down to the user's: the markers are not shown as a change
    set_tags(&env, 502, "web").await;
    let plan = env.plan().await;
    assert!(plan.contains("No changes."), "{plan}");
    // a real change of tags writes them back with it
    env.write_tf(
        &Container::new("web")
            .vm_id(502)
            .body("  tags = [\"web\", \"db\"]")
            .hcl(),
    );
    let plan = env.plan().await;
    assert!(
        plan.contains(r#"~ tags = ["web"] -> ["db", "web"]"#),
        "markers are never shown: {plan}"
    );
    env.apply().await;
    assert_eq!(
        env.live_config(502).await["tags"],
        format!("atoll;{own};db;web")
    );
}

async fn set_tags(env: &Env, vm_id: u32, tags: &str) {
    let id = atoll::proxmox::types::VmId::new(vm_id).expect("id");
    let change = atoll::proxmox::client::ConfigChange {
        set: [("tags".to_owned(), tags.to_owned())].into(),
        ..Default::default()
    };
    env.client
        .guest_update_config(
            &engine_support::node(),
            atoll::proxmox::types::GuestKind::Lxc,
            id,
            &change,
        )
        .await
        .expect("setting tags");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atlantis_import_of_another_projects_guest_is_refused_naming_the_owner() {
    use atoll::proxmox::engine::{Engine, Protect, import_one, refuse_foreign};
    use atoll::proxmox::plan::GuestKind;

    let env = Env::start().await;
    env.write_tf(&Container::new("web").vm_id(503).hcl());
    let out = env
        .atoll(&["apply", "--auto-approve", "--repo", ACME])
        .await;
    assert!(out.status.success(), "{}", text(&out));
    let engine = Engine::new(std::sync::Arc::new(env.client.clone()), Protect::default());
    let state = env.state().await;
    let input = tfconfig::Input {
        checkout: env.dir.path().join("repo"),
        project_dir: "stack".into(),
        workspace: "default".to_owned(),
        vars: Vec::new(),
        limits: tfconfig::Limits::default(),
        modules: Default::default(),
    };
    let refusal = format!(
        "CT 503 already exists on node pve, managed by {ACME} stack (default); choose another \
         vm_id or move it with a moved block / atoll state mv"
    );
    // `atlantis import` prepares the project first (an import names a guest by the vm_id the
    // configuration declares): that refuses
    let err = engine.prepare(&state, &input).await.expect_err("refused");
    assert_eq!(err.to_string(), refusal);
    // and the check `atlantis import` runs on the entry it would record says the same
    env.write_tf("");
    let prepared = engine.prepare(&state, &input).await.expect("empty plan");
    assert!(
        import_one(&prepared, WEB, "pve/503").is_err(),
        "not declared"
    );
    let claim = [(GuestKind::Lxc, 503)];
    let err = refuse_foreign(&state, &prepared.state.entries, &claim, &prepared.inventory)
        .await
        .expect_err("another project's guest");
    assert_eq!(err.to_string(), refusal);
    assert!(
        state.load().await.expect("state").entries.is_empty(),
        "nothing recorded"
    );
}
