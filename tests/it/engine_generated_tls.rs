//! The tls provider's certificates on the simulator: a CA (`tls_private_key` and
//! `tls_self_signed_cert`) signs a leaf (`tls_cert_request` and `tls_locally_signed_cert`),
//! validated, planned, applied and planned again with no changes; the chain verifies with the
//! real `openssl` when the machine has it; a certificate ready for renewal is made anew; a CA key
//! that is not the CA certificate's is refused when planning, where it is written; and a file
//! of the checkout reaches a guest through `data "local_file"`.

use crate::engine_support;

use std::collections::BTreeMap;

use crate::support::Container;
use atoll::proxmox::state::{GeneratedEntry, secrets};
use engine_support::{Env, stdout, text};

const CA_KEY: &str = "tls_private_key.ca.private_key_pem";

fn tf(ca_key: &str) -> String {
    format!(
        r#"
resource "tls_private_key" "ca" {{
  algorithm   = "ECDSA"
  ecdsa_curve = "P256"
}}
resource "tls_self_signed_cert" "ca" {{
  private_key_pem       = tls_private_key.ca.private_key_pem
  validity_period_hours = 87600
  allowed_uses          = ["cert_signing", "crl_signing"]
  is_ca_certificate     = true
  subject {{
    common_name  = "Lab CA"
    organization = "Lab"
  }}
}}
resource "tls_private_key" "leaf" {{
  algorithm = "ED25519"
}}
resource "tls_cert_request" "leaf" {{
  private_key_pem = tls_private_key.leaf.private_key_pem
  dns_names       = ["app.lab"]
  ip_addresses    = ["10.0.0.5"]
  subject {{
    common_name = "app.lab"
  }}
}}
resource "tls_locally_signed_cert" "leaf" {{
  cert_request_pem      = tls_cert_request.leaf.cert_request_pem
  ca_private_key_pem    = {ca_key}
  ca_cert_pem           = tls_self_signed_cert.ca.cert_pem
  validity_period_hours = 720
  early_renewal_hours   = 24
  allowed_uses          = ["digital_signature", "key_encipherment", "server_auth"]
}}
data "local_file" "motd" {{
  filename = "${{path.module}}/motd.txt"
}}
output "ca_cert" {{
  value = tls_self_signed_cert.ca.cert_pem
}}
output "leaf_cert" {{
  value = tls_locally_signed_cert.leaf.cert_pem
}}
"#
    ) + &Container::new("tls")
        .vm_id(907)
        .body(
            r#"  description = "${trimspace(data.local_file.motd.content)} serial ${tls_locally_signed_cert.leaf.id}""#,
        )
        .hcl()
}

/// The values stored for `address`, by attribute.
async fn stored(env: &Env, address: &str) -> BTreeMap<String, String> {
    let state = env.state().await.load().await.expect("state");
    let values = state.generated_values().remove(address).map(|g| g.values);
    values.unwrap_or_else(|| panic!("{address} is in state"))
}

/// `atoll output NAME` as the PEM it holds.
async fn output_pem(env: &Env, name: &str) -> String {
    let out = env.atoll(&["output", "--json"]).await;
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("output JSON");
    doc[name]["value"].as_str().expect("a PEM").to_owned()
}

/// `openssl verify` of the leaf against the CA, when the machine has openssl.
fn verify_with_openssl(ca: &str, leaf: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (ca_path, leaf_path) = (dir.path().join("ca.pem"), dir.path().join("leaf.pem"));
    std::fs::write(&ca_path, ca).expect("ca.pem");
    std::fs::write(&leaf_path, leaf).expect("leaf.pem");
    let Ok(out) = std::process::Command::new("openssl")
        .arg("verify")
        .arg("-CAfile")
        .arg(&ca_path)
        .arg(&leaf_path)
        .output()
    else {
        return;
    };
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.trim().ends_with(": OK"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ca_signs_a_leaf_that_verifies_and_renews_once_ready() {
    let env = Env::start().await;
    std::fs::write(env.project().join("motd.txt"), "welcome to the lab\n").expect("motd");
    env.write_tf(&tf(CA_KEY));
    let validate = env.atoll(&["validate"]).await;
    assert!(validate.status.success(), "{}", text(&validate));
    let plan = env.plan().await;
    for created in [
        "tls_self_signed_cert.ca will be created",
        "tls_cert_request.leaf will be created",
        "tls_locally_signed_cert.leaf will be created",
    ] {
        assert!(plan.contains(created), "{created}: {plan}");
    }
    env.apply().await;
    let ca = stored(&env, "tls_self_signed_cert.ca").await;
    let leaf = stored(&env, "tls_locally_signed_cert.leaf").await;
    let key = stored(&env, "tls_private_key.ca").await["private_key_pem"].clone();
    assert_eq!(ca["key_algorithm"], "ECDSA");
    assert_eq!(leaf["ca_key_algorithm"], "ECDSA");
    assert_eq!(
        stored(&env, "tls_cert_request.leaf").await["key_algorithm"],
        "ED25519"
    );
    assert_eq!(output_pem(&env, "ca_cert").await, ca["cert_pem"]);
    assert_eq!(output_pem(&env, "leaf_cert").await, leaf["cert_pem"]);
    verify_with_openssl(&ca["cert_pem"], &leaf["cert_pem"]);
    let description = env.live_config(907).await["description"].clone();
    assert_eq!(
        description.trim(),
        format!("welcome to the lab serial {}", leaf["id"])
    );
    // The CA's key is in state, never in a plan or the state listing.
    let show = env
        .atoll(&["state", "show", "tls_self_signed_cert.ca"])
        .await;
    let body = key.lines().nth(1).expect("a PEM line");
    assert!(!text(&show).contains(body), "{}", text(&show));
    assert!(env.plan().await.contains("No changes."));

    // Time passes: the leaf is within its early renewal hours, and the plan says so.
    let handle = env.state().await;
    let mut values = leaf.clone();
    values.insert(
        "validity_end_time".to_owned(),
        "2020-01-01T00:00:00Z".to_owned(),
    );
    let state = handle.load().await.expect("state");
    let entry = state
        .generated
        .iter()
        .find(|g| g.address == "tls_locally_signed_cert.leaf")
        .expect("in state");
    let expiring = GeneratedEntry {
        values: secrets(values),
        ..entry.clone()
    };
    handle.record_generated(&expiring).await.expect("recorded");
    let plan = env.plan().await;
    assert!(
        plan.contains("tls_locally_signed_cert.leaf must be replaced"),
        "{plan}"
    );
    assert!(plan.contains("ready for renewal"), "{plan}");
    assert!(!plan.contains("tls_self_signed_cert.ca"), "{plan}");
    env.apply().await;
    let renewed = stored(&env, "tls_locally_signed_cert.leaf").await;
    assert_ne!(renewed["id"], leaf["id"]);
    verify_with_openssl(&ca["cert_pem"], &renewed["cert_pem"]);
    assert!(env.plan().await.contains("No changes."));

    // A CA key that is not the CA certificate's is refused when planning, where it is written.
    env.write_tf(&tf("tls_private_key.leaf.private_key_pem"));
    let plan = env.atoll(&["plan"]).await;
    assert!(!plan.status.success());
    let said = text(&plan);
    assert!(
        said.contains("Error: Failed to create certificate"),
        "{said}"
    );
    assert!(said.contains("on main.tf line 27"), "{said}");
    assert!(said.contains("doesn't match parent's PublicKey"), "{said}");
    assert!(!said.contains("Error: Error:"), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pem_that_does_not_parse_is_refused_at_plan_with_file_and_line() {
    let env = Env::start().await;
    std::fs::write(env.project().join("motd.txt"), "welcome\n").expect("motd");
    env.write_tf(&tf(
        "\"-----BEGIN EC PRIVATE KEY-----\\nnot base64\\n-----END EC PRIVATE KEY-----\\n\"",
    ));
    let plan = env.atoll(&["plan"]).await;
    assert!(!plan.status.success());
    let said = text(&plan);
    assert!(
        said.contains("Error: Failed to parse CA private key PEM"),
        "{said}"
    );
    assert!(said.contains("on main.tf line 27"), "{said}");
    // Nothing was made.
    let state = env.state().await.load().await.expect("state");
    assert!(state.generated.is_empty());
}
