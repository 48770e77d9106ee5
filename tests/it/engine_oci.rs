//! OCI application containers (PVE 9.1+) end to end on the simulator: bpg's `proxmox_oci_image`
//! pulled through `oci-registry-pull`, a container created from the archive (pve-container
//! `restore_oci_archive` sets its entrypoint, console mode, host-managed networking and
//! environment from the image), a next plan with no changes, and a new image tag that pulls
//! again and replaces the container.

use crate::engine_support::{Env, change, options, text};

const SCENARIO: &str = r#"
nodes:
  - name: pve
    bridges: {vmbr0: 1500}
    storages:
      - {id: local, type: dir, content: [vztmpl, iso]}
      - {id: local-lvm, type: lvmthin, content: [rootdir, images], total: 1T}
registry:
  "docker.io/library/nginx:alpine":
    entrypoint: [/docker-entrypoint.sh]
    cmd: [nginx, -g, "daemon off;"]
    env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "NGINX_VERSION=1.27.3"]
  "docker.io/library/nginx:1.29-alpine":
    entrypoint: [/docker-entrypoint.sh]
    cmd: [nginx, -g, "daemon off;"]
    env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "NGINX_VERSION=1.29.0"]
"#;

/// The image and a container made from it that says what the image sets.
fn project(tag: &str, version: &str) -> String {
    format!(
        r#"
resource "proxmox_oci_image" "nginx" {{
  node_name    = "pve"
  datastore_id = "local"
  reference    = "docker.io/library/nginx:{tag}"
}}

resource "proxmox_virtual_environment_container" "web" {{
  node_name    = "pve"
  vm_id        = 410
  unprivileged = true
  operating_system {{
    template_file_id = proxmox_oci_image.nginx.id
    type             = "unmanaged"
  }}
  disk {{
    datastore_id = "local-lvm"
    size         = 2
  }}
  network_interface {{
    name         = "eth0"
    host_managed = true
  }}
  console {{
    type = "console"
  }}
  initialization {{
    hostname   = "web"
    entrypoint = "/docker-entrypoint.sh nginx -g 'daemon off;'"
    ip_config {{
      ipv4 {{
        address = "dhcp"
      }}
    }}
  }}
  environment_variables = {{
    PATH          = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    NGINX_VERSION = "{version}"
  }}
}}
"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_application_container_is_made_from_a_pulled_image_and_then_plans_no_changes() {
    let env = Env::with_scenario(SCENARIO, options(5)).await;
    env.write_tf(&project("alpine", "1.27.3"));
    let plan = env.plan_json().await;
    let image = change(&plan, "proxmox_oci_image.nginx");
    assert_eq!(image["actions"], serde_json::json!(["create"]), "{image}");
    env.apply().await;

    let content = crate::engine_support::sim_get(&env, "/nodes/pve/storage/local/content").await;
    assert!(
        content
            .to_string()
            .contains("local:vztmpl/nginx_alpine.tar"),
        "{content}"
    );
    let config = env.live_config(410).await;
    assert_eq!(
        config.get("entrypoint").map(String::as_str),
        Some("/docker-entrypoint.sh nginx -g 'daemon off;'")
    );
    assert_eq!(config.get("cmode").map(String::as_str), Some("console"));
    assert!(config["net0"].contains("host-managed=1"), "{config:?}");
    assert!(config["env"].contains("NGINX_VERSION=1.27.3"), "{config:?}");

    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_image_tag_pulls_again_and_replaces_the_container() {
    let env = Env::with_scenario(SCENARIO, options(5)).await;
    env.write_tf(&project("alpine", "1.27.3"));
    env.apply().await;
    env.write_tf(&project("1.29-alpine", "1.29.0"));
    let plan = env.plan_json().await;
    let image = change(&plan, "proxmox_oci_image.nginx");
    assert_eq!(
        image["actions"],
        serde_json::json!(["delete", "create"]),
        "{image}"
    );
    let web = change(&plan, "proxmox_virtual_environment_container.web");
    assert_eq!(web["disruption"], "replace", "{web}");
    let shown = env.plan().await;
    assert!(
        shown.contains("the container is made anew from local:vztmpl/nginx_1.29-alpine.tar")
            && shown
                .contains("its volumes are destroyed with it (rootfs (local-lvm:vm-410-disk-0))"),
        "{shown}"
    );
    env.apply().await;
    let config = env.live_config(410).await;
    assert!(config["env"].contains("NGINX_VERSION=1.29.0"), "{config:?}");
    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_the_registry_does_not_have_fails_its_pull_and_nothing_is_recorded() {
    let env = Env::with_scenario(SCENARIO, options(5)).await;
    env.write_tf(&project("nosuch", "0"));
    let out = env.atoll(&["apply", "--auto-approve"]).await;
    assert!(!out.status.success());
    let shown = text(&out);
    assert!(
        shown.contains("pulling docker.io/library/nginx:nosuch")
            && shown.contains("skopeo copy docker://docker.io/library/nginx:nosuch"),
        "{shown}"
    );
    assert!(
        env.lxc_ids().await.is_empty(),
        "no container without its image"
    );
}
