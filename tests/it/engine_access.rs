//! Users, groups, roles, ACL entries, API tokens and pool membership end to end on the
//! simulator: apply, then an empty plan; a change applied as planned; a destroy. The token's
//! secret is kept in state as a secret, authenticates, and appears in no plan; and the guard
//! refuses a change that would take away the access atoll itself works with.

use crate::engine_support;

use engine_support::{Env, TOKEN, change, options, stdout, text};

const SCENARIO: &str = r#"
nodes:
  - name: pve
    bridges: {vmbr0: 1500}
    storages:
      - {id: local, type: dir, content: [vztmpl, iso, import, snippets]}
      - {id: local-lvm, type: lvmthin, content: [rootdir, images], total: 4T}
"#;

/// The stack: a group, a user in it, a role, ACL entries for the group and the token, a token,
/// a pool with a storage in it. `privs` are the role's privileges; `acl` adds the token's
/// ACL entry; `comment` is the user's.
fn stack(privs: &str, comment: &str, acl: bool) -> String {
    let token_acl = if acl {
        r#"
resource "proxmox_acl" "deploy" {
  token_id = proxmox_user_token.deploy.id
  role_id  = proxmox_virtual_environment_role.deployer.role_id
  path     = "/"
}
"#
    } else {
        ""
    };
    format!(
        r#"
resource "proxmox_virtual_environment_group" "ops" {{
  group_id = "ops"
  comment  = "operators"
}}

resource "proxmox_virtual_environment_user" "ci" {{
  user_id  = "ci@pve"
  comment  = "{comment}"
  password = "correct-horse-battery"
  groups   = [proxmox_virtual_environment_group.ops.group_id]
  email    = "ci@example.com"
}}

resource "proxmox_virtual_environment_role" "deployer" {{
  role_id    = "Deployer"
  privileges = [{privs}]
}}

resource "proxmox_virtual_environment_acl" "ops" {{
  group_id  = proxmox_virtual_environment_group.ops.group_id
  role_id   = "PVEAuditor"
  path      = "/vms"
  propagate = true
}}

resource "proxmox_user_token" "deploy" {{
  user_id               = proxmox_virtual_environment_user.ci.user_id
  token_name            = "deploy"
  comment               = "pipelines"
  privileges_separation = false
}}
{token_acl}
resource "proxmox_virtual_environment_pool" "web" {{
  pool_id = "web"
}}

resource "proxmox_pool_membership" "local" {{
  pool_id    = proxmox_virtual_environment_pool.web.pool_id
  storage_id = "local"
}}

output "token" {{
  value     = proxmox_user_token.deploy.value
  sensitive = true
}}
"#
    )
}

const PRIVS: &str = r#""VM.Audit", "Sys.Audit", "VM.PowerMgmt""#;

async fn get_as(env: &Env, token: &str, path: &str) -> (u16, serde_json::Value) {
    let response = reqwest::Client::new()
        .get(format!("{}{path}", env.sim.base_url()))
        .header("Authorization", format!("PVEAPIToken={token}"))
        .send()
        .await
        .expect("the simulator answers");
    let status = response.status().as_u16();
    let body: serde_json::Value = response.json().await.unwrap_or_default();
    (status, body["data"].clone())
}

async fn get(env: &Env, path: &str) -> serde_json::Value {
    get_as(env, TOKEN, path).await.1
}

/// The token's secret as atoll's state keeps it.
async fn token_value(env: &Env) -> String {
    use secrecy::ExposeSecret;
    let state = env.state().await.load().await.expect("state");
    let values = state
        .object_values
        .iter()
        .find(|v| v.address == "proxmox_user_token.deploy")
        .expect("the token's value is in state");
    values.values.0["value"].expose_secret().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn access_objects_apply_the_next_plan_is_empty_and_changes_apply_as_planned() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(&stack(PRIVS, "the robot", true));
    let plan = env.plan().await;
    assert!(
        !plan.contains("correct-horse-battery"),
        "the password is never shown: {plan}"
    );
    let out = env.apply().await;
    assert!(out.status.success(), "apply: {}", text(&out));

    let user = get(&env, "/access/users/ci@pve").await;
    assert_eq!(user["comment"], "the robot", "{user}");
    assert_eq!(user["groups"], serde_json::json!(["ops"]), "{user}");
    assert_eq!(user["tokens"]["deploy"]["privsep"], 0, "{user}");
    let role = get(&env, "/access/roles/Deployer").await;
    assert_eq!(role["VM.PowerMgmt"], 1, "{role}");
    let acl = get(&env, "/access/acl").await;
    let entries = acl.as_array().expect("entries");
    assert!(
        entries
            .iter()
            .any(|e| e["ugid"] == "ci@pve!deploy" && e["roleid"] == "Deployer" && e["path"] == "/"),
        "{acl}"
    );
    assert!(
        entries
            .iter()
            .any(|e| e["ugid"] == "ops" && e["type"] == "group" && e["path"] == "/vms"),
        "{acl}"
    );
    let pool = get(&env, "/pools/web").await;
    assert!(
        pool["members"]
            .as_array()
            .expect("members")
            .iter()
            .any(|m| m["storage"] == "local"),
        "{pool}"
    );

    // the token's secret: in state, authenticating, never in a plan or an output shown
    let value = token_value(&env).await;
    let (status, _) = get_as(&env, &format!("ci@pve!deploy={value}"), "/version").await;
    assert_eq!(status, 200, "the token made through atoll authenticates");
    assert!(
        !text(&out).contains(&value),
        "apply output shows the secret"
    );
    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(stdout(&again).contains("No changes."), "{}", text(&again));
    assert!(!text(&again).contains(&value));
    let json = env.plan_json().await.to_string();
    assert!(!json.contains(&value) && !json.contains("correct-horse-battery"));
    let shown = env
        .atoll(&["state", "show", "proxmox_user_token.deploy"])
        .await;
    assert!(!text(&shown).contains(&value), "{}", text(&shown));
    assert!(
        stdout(&shown).contains("value = (sensitive value)"),
        "{}",
        text(&shown)
    );

    // fewer privileges and a new comment: updated in place, live
    env.write_tf(&stack(r#""VM.Audit""#, "the deploy robot", true));
    let plan = env.plan_json().await;
    let role = change(&plan, "proxmox_virtual_environment_role.deployer");
    assert_eq!(role["actions"], serde_json::json!(["update"]), "{role}");
    assert_eq!(role["attributes"][0]["path"], "privileges", "{role}");
    assert_eq!(role["disruption"], "live", "{role}");
    let user = change(&plan, "proxmox_virtual_environment_user.ci");
    assert_eq!(user["attributes"][0]["path"], "comment", "{user}");
    assert!(env.apply().await.status.success());
    let role = get(&env, "/access/roles/Deployer").await;
    assert_eq!(role, serde_json::json!({"VM.Audit": 1}));
    assert_eq!(
        get(&env, "/access/users/ci@pve").await["comment"],
        "the deploy robot"
    );
    assert_eq!(
        token_value(&env).await,
        value,
        "a change elsewhere keeps the token's value"
    );
    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));

    env.write_tf("");
    let out = env.apply().await;
    assert!(out.status.success(), "destroy: {}", text(&out));
    let users = get(&env, "/access/users").await;
    assert!(
        !users
            .as_array()
            .expect("users")
            .iter()
            .any(|u| u["userid"] == "ci@pve"),
        "{users}"
    );
    let (status, _) = get_as(&env, &format!("ci@pve!deploy={value}"), "/version").await;
    assert_eq!(status, 401, "a destroyed token no longer authenticates");
    let acl = get(&env, "/access/acl").await;
    assert_eq!(acl.as_array().map(Vec::len), Some(0), "{acl}");
    let roles = get(&env, "/access/roles").await;
    assert!(
        !roles
            .as_array()
            .expect("roles")
            .iter()
            .any(|r| r["roleid"] == "Deployer")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guard_refuses_to_take_away_the_access_atoll_works_with() {
    let mut env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(&stack(PRIVS, "the robot", true));
    assert!(env.apply().await.status.success());
    // from now on atoll works as the token it made
    let value = token_value(&env).await;
    env.extra_env.push((
        "PROXMOX_VE_API_TOKEN".to_owned(),
        format!("ci@pve!deploy={value}"),
    ));
    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));

    // the ACL entry that grants the token, and privileges of the role it uses: refused
    env.write_tf(&stack(r#""VM.Audit""#, "the robot", false));
    let plan = env.plan_json().await;
    for (address, says) in [
        ("proxmox_acl.deploy", "remove the ACL entry"),
        ("proxmox_virtual_environment_role.deployer", "Sys.Audit"),
    ] {
        let blocked = &change(&plan, address)["blocked"];
        assert_eq!(blocked["rule"], "self-lockout", "{address}: {blocked}");
        let reason = blocked["reason"].as_str().expect("a reason");
        assert!(
            reason.contains(says) && reason.contains("ci@pve!deploy"),
            "{reason}"
        );
    }
    let out = env.atoll(&["apply", "--auto-approve"]).await;
    let acl = get(&env, "/access/acl").await;
    assert!(
        acl.as_array()
            .expect("entries")
            .iter()
            .any(|e| e["ugid"] == "ci@pve!deploy"),
        "the entry is still there after {}: {acl}",
        text(&out)
    );
    assert_eq!(
        get(&env, "/access/roles/Deployer").await["Sys.Audit"],
        1,
        "the role keeps its privileges"
    );

    // deleting its own token or user is refused too; a comment goes through
    env.write_tf(&stack(PRIVS, "still the robot", true).replace(
        "token_name            = \"deploy\"",
        "token_name            = \"deploy2\"",
    ));
    let plan = env.plan_json().await;
    let token = change(&plan, "proxmox_user_token.deploy");
    assert_eq!(token["blocked"]["rule"], "self-lockout", "{token}");
    let user = change(&plan, "proxmox_virtual_environment_user.ci");
    assert!(user["blocked"].is_null(), "{user}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_groups_and_roles_data_sources_read_what_the_cluster_holds() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(&stack(PRIVS, "the robot", true));
    assert!(env.apply().await.status.success());
    let reads = r#"
data "proxmox_virtual_environment_users" "all" {}

data "proxmox_virtual_environment_user" "ci" {
  user_id = "ci@pve"
}

data "proxmox_virtual_environment_groups" "all" {}

data "proxmox_virtual_environment_group" "ops" {
  group_id = data.proxmox_virtual_environment_groups.all.group_ids[0]
}

data "proxmox_virtual_environment_roles" "all" {}

data "proxmox_virtual_environment_role" "deployer" {
  role_id = "Deployer"
}

resource "terraform_data" "facts" {
  input = [
    "groups ${join(",", data.proxmox_virtual_environment_user.ci.groups)}",
    "email ${data.proxmox_virtual_environment_user.ci.email}",
    "users ${join(",", data.proxmox_virtual_environment_users.all.user_ids)}",
    "members ${join(",", data.proxmox_virtual_environment_group.ops.members)}",
    "acl ${join(",", [for e in data.proxmox_virtual_environment_group.ops.acl : "${e.path}=${e.role_id}"])}",
    "deployer ${join(",", sort(data.proxmox_virtual_environment_role.deployer.privileges))}",
    "special ${length([for s in data.proxmox_virtual_environment_roles.all.special : s if s])}",
  ]
}
"#;
    env.write_tf(&format!("{}{reads}", stack(PRIVS, "the robot", true)));
    let out = env.atoll(&["plan"]).await;
    assert!(out.status.success(), "{}", text(&out));
    let said = stdout(&out);
    let special = model::access::builtin_roles().len();
    for expected in [
        "\"groups ops\"".to_owned(),
        "\"email ci@example.com\"".to_owned(),
        "\"members ci@pve\"".to_owned(),
        "\"acl /vms=PVEAuditor\"".to_owned(),
        "\"deployer Sys.Audit,VM.Audit,VM.PowerMgmt\"".to_owned(),
        format!("\"special {special}\""),
    ] {
        assert!(said.contains(&expected), "{expected} in {said}");
    }
    assert!(
        said.contains("ci@pve") && said.contains("root@pam"),
        "{said}"
    );
}

/// The configuration's access objects as atoll will send them, or why not.
fn desired(tf: &str) -> Result<Vec<atoll::proxmox::plan::DesiredObject>, String> {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("main.tf"), tf).expect("main.tf");
    let input = tfconfig::Input {
        checkout: dir.path().to_path_buf(),
        project_dir: ".".into(),
        workspace: "default".to_owned(),
        vars: Vec::new(),
        limits: Default::default(),
        modules: Default::default(),
    };
    let loaded = tfconfig::load(&input);
    assert!(!loaded.has_errors(), "{}", loaded.render_diagnostics());
    let built = atoll::proxmox::desired::build(&loaded.resources).map_err(|errors| {
        errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    Ok(built
        .resources
        .into_iter()
        .filter_map(|d| match d {
            atoll::proxmox::plan::Desired::Object(o) => Some(o),
            _ => None,
        })
        .collect())
}

#[test]
fn access_arguments_become_pve_parameters_and_bad_ones_are_refused_at_plan() {
    let objects = desired(
        r#"
resource "proxmox_virtual_environment_user" "u" {
  user_id         = "ops@pve"
  password        = "long-enough-secret"
  expiration_date = "2034-01-01T22:00:00Z"
  groups          = ["b", "a"]
  enabled         = false
}

resource "proxmox_acl" "a" {
  user_id = proxmox_virtual_environment_user.u.user_id
  role_id = "PVEAuditor"
  path    = "/vms/100"
}

resource "proxmox_pool_membership" "m" {
  pool_id = "web"
  vm_id   = 100
}
"#,
    )
    .expect("desired");
    let find = |address: &str| {
        objects
            .iter()
            .find(|o| o.address == address)
            .unwrap_or_else(|| panic!("{address}"))
    };
    let user = find("proxmox_virtual_environment_user.u");
    assert_eq!(user.id.path(), "/access/users/ops@pve");
    assert_eq!(user.fields["expire"], "2019765600");
    assert_eq!(user.fields["groups"], "a,b");
    assert_eq!(user.fields["enable"], "0");
    assert!(
        !user.fields.contains_key("password"),
        "write-only, never compared"
    );
    assert_eq!(user.secrets["password"].expose(), "long-enough-secret");
    assert!(!format!("{user:?}").contains("long-enough-secret"));
    let acl = find("proxmox_acl.a");
    assert_eq!(
        acl.id.import_id().as_deref(),
        Some("/vms/100?ops@pve?PVEAuditor")
    );
    assert_eq!(acl.fields["propagate"], "1");
    assert!(
        acl.uses.iter().any(|u| u.ends_with("user.u")),
        "{:?}",
        acl.uses
    );
    let member = find("proxmox_pool_membership.m");
    assert_eq!(member.id.import_id().as_deref(), Some("web/vm/100"));

    for (tf, says) in [
        (
            r#"resource "proxmox_acl" "a" {
  user_id  = "ops@pve"
  group_id = "ops"
  role_id  = "PVEAuditor"
  path     = "/"
}"#,
            "exactly one of user_id, group_id or token_id",
        ),
        (
            r#"resource "proxmox_acl" "a" {
  group_id = "ops"
  role_id  = "PVEAuditor"
  path     = "/vm/100"
}"#,
            "not an ACL path Proxmox VE accepts",
        ),
        (
            r#"resource "proxmox_virtual_environment_role" "r" {
  role_id    = "ops"
  privileges = ["VM.Audit", "VM.Monitor"]
}"#,
            "no privilege 'VM.Monitor'",
        ),
        (
            r#"resource "proxmox_virtual_environment_user" "u" {
  user_id  = "ops@pve"
  password = "short"
}"#,
            "8 to 64 characters, this one has 5",
        ),
        (
            r#"resource "proxmox_virtual_environment_user" "u" {
  user_id = "ops"
}"#,
            "user id",
        ),
    ] {
        let refused = desired(tf).expect_err(says);
        assert!(refused.contains(says), "{says}: {refused}");
        assert!(
            !refused.contains("short\""),
            "the password is never said: {refused}"
        );
    }
}
