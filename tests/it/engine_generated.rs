//! Values generated at apply time (`random_password`, `tls_private_key`): made once, stored in
//! state, sent to PVE, never shown in any output, stable across later plans, made anew when a
//! replace-forcing argument or a keeper changes, and dropped from state when no longer declared.
//! The keys are checked with the real tools: OpenSSH's `ssh-keygen` and OpenSSL.

use crate::engine_support;

use std::collections::BTreeMap;

use crate::support::Container;
use engine_support::{Env, text};

fn tf() -> String {
    r#"
resource "random_password" "root" {
  length  = 20
  special = false
}
"#
    .to_owned()
        + &Container::new("pw")
            .vm_id(901)
            .body(
                r#"  initialization {
    user_account {
      password = random_password.root.result
    }
  }"#,
            )
            .hcl()
}

/// The values stored for `address`, by attribute.
async fn stored(env: &Env, address: &str) -> Option<BTreeMap<String, String>> {
    let state = env.state().await.load().await.expect("state");
    state.generated_values().remove(address).map(|g| g.values)
}

async fn stored_password(env: &Env) -> String {
    stored(env, "random_password.root")
        .await
        .expect("the password is in state")["result"]
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_password_is_created_once_used_and_never_shown() {
    let env = Env::start().await;
    env.write_tf(&tf());
    let plan = env.plan().await;
    assert!(
        plan.contains("random_password.root will be created"),
        "{plan}"
    );
    assert!(plan.contains("(sensitive value)"), "{plan}");
    let applied = env.apply().await;
    let password = stored_password(&env).await;
    assert_eq!(password.chars().count(), 20);
    assert!(password.chars().all(char::is_alphanumeric));
    assert_eq!(env.lxc_ids().await, vec![901]);
    let show = env.atoll(&["state", "show", "random_password.root"]).await;
    let guest = env
        .atoll(&["state", "show", "proxmox_virtual_environment_container.pw"])
        .await;
    let again = env.plan().await;
    assert!(again.contains("No changes."), "{again}");
    let json = env.atoll(&["plan", "--json"]).await;
    for (what, out) in [
        ("apply", text(&applied)),
        ("state show", text(&show)),
        ("state show guest", text(&guest)),
        ("plan", again),
        ("plan --json", text(&json)),
    ] {
        assert!(!out.contains(&password), "{what} printed the password");
    }
    assert!(
        text(&show).contains("result = (sensitive value)"),
        "{}",
        text(&show)
    );
    assert!(
        text(&guest).contains("config.password = (sensitive value)"),
        "{}",
        text(&guest)
    );
    // a second apply keeps the same value
    env.apply().await;
    assert_eq!(stored_password(&env).await, password);
}

/// A container whose root account takes the key `tls_private_key.ssh` makes.
fn keyed(key_args: &str) -> String {
    format!("resource \"tls_private_key\" \"ssh\" {{\n{key_args}\n}}\n")
        + &Container::new("keyed")
            .vm_id(902)
            .body(
                r#"  initialization {
    user_account {
      keys = [trimspace(tls_private_key.ssh.public_key_openssh)]
    }
  }"#,
            )
            .hcl()
}

/// Runs `program args` with `input` written to a temporary file named by `{}` in `args`.
fn tool(program: &str, args: &[&str], input: &str) -> String {
    String::from_utf8(tool_bytes(program, args, input)).expect("utf-8")
}

fn tool_bytes(program: &str, args: &[&str], input: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("key");
    std::fs::write(&file, input).expect("write key");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    }
    let path = file.to_str().expect("utf-8 path");
    let args: Vec<&str> = args
        .iter()
        .map(|a| if *a == "{}" { path } else { a })
        .collect();
    let out = std::process::Command::new(program)
        .args(&args)
        .output()
        .unwrap_or_else(|e| {
            panic!("{program} (OpenSSH's ssh-keygen and OpenSSL are test dependencies): {e}")
        });
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Every form of the key agrees with the others, as OpenSSH and OpenSSL read them.
fn check_key(key: &BTreeMap<String, String>, ssh_type: &str) {
    let public = &key["public_key_openssh"];
    assert!(
        public.starts_with(&format!("{ssh_type} ")) && public.ends_with('\n'),
        "{public}"
    );
    let derived = tool(
        "ssh-keygen",
        &["-y", "-f", "{}"],
        &key["private_key_openssh"],
    );
    assert_eq!(derived.trim(), public.trim());
    let md5 = tool("ssh-keygen", &["-l", "-E", "md5", "-f", "{}"], public);
    assert!(
        md5.contains(&format!("MD5:{} ", key["public_key_fingerprint_md5"])),
        "{md5}"
    );
    let sha = tool("ssh-keygen", &["-l", "-E", "sha256", "-f", "{}"], public);
    assert!(
        sha.contains(&format!("{} ", key["public_key_fingerprint_sha256"])),
        "{sha}"
    );
    for private in ["private_key_pem", "private_key_pem_pkcs8"] {
        let pem = tool("openssl", &["pkey", "-in", "{}", "-pubout"], &key[private]);
        assert_eq!(pem, key["public_key_pem"], "{private}");
    }
    assert!(key["private_key_pem_pkcs8"].starts_with("-----BEGIN PRIVATE KEY-----\n"));
    // `id` is the provider's: the SHA-1 of the public key's DER, passed through Go's
    // `strings.TrimSpace` (a DER ending in a byte such as 0x0a loses it: about one key in 40).
    let der = tool_bytes(
        "openssl",
        &["pkey", "-pubin", "-in", "{}", "-outform", "DER"],
        &key["public_key_pem"],
    );
    let ascii_space = |b: &u8| b" \t\n\x0b\x0c\r".contains(b);
    let end = der
        .iter()
        .rposition(|b| !ascii_space(b))
        .map_or(0, |i| i + 1);
    let trimmed = &der[..end];
    use sha1::Digest as _;
    assert_eq!(key["id"], hex::encode(sha1::Sha1::digest(trimmed)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_private_keys_are_generated_in_every_form_used_and_never_shown() {
    let env = Env::start().await;
    for (args, ssh_type, pem_header) in [
        (
            "  algorithm = \"ED25519\"",
            "ssh-ed25519",
            "-----BEGIN PRIVATE KEY-----",
        ),
        (
            "  algorithm = \"RSA\"\n  rsa_bits  = 2048",
            "ssh-rsa",
            "-----BEGIN RSA PRIVATE KEY-----",
        ),
        (
            "  algorithm   = \"ECDSA\"\n  ecdsa_curve = \"P256\"",
            "ecdsa-sha2-nistp256",
            "-----BEGIN EC PRIVATE KEY-----",
        ),
    ] {
        env.write_tf(&keyed(args));
        let plan = env.plan().await;
        // The first key is created; each next one replaces it, and so the container it keys.
        assert!(
            plan.contains("tls_private_key.ssh will be created")
                || plan.contains("tls_private_key.ssh must be replaced"),
            "{plan}"
        );
        let applied = env.apply().await;
        let key = stored(&env, "tls_private_key.ssh")
            .await
            .expect("the key is in state");
        assert!(key["private_key_pem"].starts_with(pem_header), "{ssh_type}");
        check_key(&key, ssh_type);
        let created = env.sim.created_from(902);
        assert_eq!(
            created.get("ssh-public-keys").map(|k| k.trim()),
            Some(key["public_key_openssh"].trim()),
            "{ssh_type}: the container got the key"
        );
        let again = env.plan().await;
        assert!(again.contains("No changes."), "{ssh_type}: {again}");
        let json = env.atoll(&["plan", "--json"]).await;
        let show = env.atoll(&["state", "show", "tls_private_key.ssh"]).await;
        for (what, out) in [
            ("plan", plan),
            ("apply", text(&applied)),
            ("plan --json", text(&json)),
            ("state show", text(&show)),
        ] {
            let secret = key["private_key_pem"]
                .lines()
                .nth(1)
                .expect("a base64 line");
            assert!(!out.contains(secret), "{what} printed the private key");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_algorithm_or_keeper_generates_anew_and_a_removed_one_leaves_state() {
    let env = Env::start().await;
    env.write_tf(&keyed("  algorithm = \"ED25519\""));
    env.apply().await;
    let first = stored(&env, "tls_private_key.ssh").await.expect("key");
    env.write_tf(&keyed("  algorithm = \"ECDSA\"\n  ecdsa_curve = \"P384\""));
    let plan = env.plan().await;
    assert!(
        plan.contains("tls_private_key.ssh must be replaced"),
        "{plan}"
    );
    assert!(
        plan.contains("(known after apply)"),
        "the key's users learn it at apply: {plan}"
    );
    env.apply().await;
    let second = stored(&env, "tls_private_key.ssh").await.expect("key");
    assert!(second["public_key_openssh"].starts_with("ecdsa-sha2-nistp384 "));
    assert_ne!(first["private_key_pem"], second["private_key_pem"]);
    let again = env.plan().await;
    assert!(again.contains("No changes."), "{again}");

    let password = |keeper: &str| {
        format!(
            "resource \"random_password\" \"db\" {{\n  length = 16\n  keepers = {{ rotated = \"{keeper}\" }}\n}}\n"
        )
    };
    env.write_tf(&password("2026-01"));
    let plan = env.plan().await;
    assert!(
        plan.contains("tls_private_key.ssh will be destroyed"),
        "{plan}"
    );
    env.apply().await;
    assert!(
        stored(&env, "tls_private_key.ssh").await.is_none(),
        "the removed key left state"
    );
    let before = stored(&env, "random_password.db").await.expect("password")["result"].clone();
    env.write_tf(&password("2026-01"));
    assert!(env.plan().await.contains("No changes."));
    env.write_tf(&password("2026-02"));
    let plan = env.plan().await;
    assert!(
        plan.contains("random_password.db must be replaced"),
        "{plan}"
    );
    env.apply().await;
    let after = stored(&env, "random_password.db").await.expect("password")["result"].clone();
    assert_ne!(before, after, "a new keeper makes a new password");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_the_providers_refuse_are_refused_on_their_line_by_validate_and_plan() {
    let env = Env::start().await;
    for (args, says) in [
        (
            "resource \"tls_private_key\" \"k\" {\n  algorithm = \"DSA\"\n}\n",
            r#"Attribute algorithm value must be one of: "RSA", "ECDSA", "ED25519"; got: "DSA"."#,
        ),
        (
            "resource \"tls_private_key\" \"k\" {\n  algorithm   = \"ECDSA\"\n  ecdsa_curve = \"P999\"\n}\n",
            r#"Attribute ecdsa_curve value must be one of: "P224", "P256", "P384", "P521"; got: "P999"."#,
        ),
        (
            "resource \"tls_private_key\" \"k\" {\n  algorithm = \"RSA\"\n  rsa_bits  = 65536\n}\n",
            "Attribute rsa_bits value must be a whole number between 1024 and 8192, got: 65536",
        ),
        (
            "resource \"random_password\" \"p\" {\n  length = 100000\n}\n",
            "Attribute length value must be a whole number between 1 and 1024, got: 100000",
        ),
        (
            "resource \"random_integer\" \"i\" {\n  min = 5\n  max = 1\n}\n",
            "minimum value needs to be smaller than or equal to maximum value",
        ),
        (
            "resource \"tls_private_key\" \"k\" {\n  count = 5\n  algorithm = \"RSA\"\n  rsa_bits  = 8192\n}\n",
            "would take about 1280 RSA-2048 keys' worth of key generation, more than the 1024",
        ),
    ] {
        // Diagnostics wrap their text: compare word by word.
        let flat = |t: String| t.split_whitespace().collect::<Vec<_>>().join(" ");
        env.write_tf(args);
        let plan = env.atoll(&["plan"]).await;
        assert!(!plan.status.success());
        assert!(flat(text(&plan)).contains(says), "{args}: {}", text(&plan));
        // A range across two arguments, and the key budget across resources, are the engine's.
        if !args.contains("random_integer") && !args.contains("count") {
            // The same refusal, where it is written, before any cluster is asked.
            let validate = env.atoll(&["validate"]).await;
            assert!(!validate.status.success(), "{}", text(&validate));
            assert!(flat(text(&validate)).contains(says), "{}", text(&validate));
            assert!(
                text(&validate).contains("on main.tf line"),
                "{}",
                text(&validate)
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_ids_integers_uuids_bytes_and_time_static_reach_the_guest_and_stay() {
    let env = Env::start().await;
    let tf = |trigger: &str| {
        format!(
            r#"
resource "random_id" "suffix" {{
  byte_length = 4
  prefix      = "ct-"
}}
resource "random_integer" "cores" {{
  min = 1
  max = 2
}}
resource "random_uuid" "tag" {{}}
resource "random_bytes" "salt" {{
  length = 16
}}
resource "time_static" "born" {{
  triggers = {{ image = "{trigger}" }}
}}
"#
        ) + &Container::new("stamped")
            .vm_id(903)
            .body(
                r#"  description = "${random_id.suffix.hex} ${random_uuid.tag.result} ${time_static.born.year} ${length(random_bytes.salt.hex)}"
  cpu {
    cores = random_integer.cores.result
  }"#,
            )
            .hcl()
    };
    env.write_tf(&tf("debian-12"));
    let plan = env.plan().await;
    for created in [
        "random_id.suffix will be created",
        "random_integer.cores will be created",
        "random_uuid.tag will be created",
        "random_bytes.salt will be created",
        "time_static.born will be created",
    ] {
        assert!(plan.contains(created), "{created}: {plan}");
    }
    env.apply().await;
    let id = stored(&env, "random_id.suffix").await.expect("id");
    let uuid = stored(&env, "random_uuid.tag").await.expect("uuid");
    let born = stored(&env, "time_static.born").await.expect("time");
    let cores = stored(&env, "random_integer.cores").await.expect("int");
    let config = env.live_config(903).await;
    let description = config.get("description").cloned().unwrap_or_default();
    assert!(
        id["hex"].starts_with("ct-") && id["hex"].len() == 11,
        "{}",
        id["hex"]
    );
    let year = time::OffsetDateTime::now_utc().year().to_string();
    assert_eq!(born["year"], year);
    assert_eq!(
        description.trim(),
        format!("{} {} {year} 32", id["hex"], uuid["result"]),
        "{config:?}"
    );
    assert_eq!(
        config.get("cores"),
        Some(&cores["result"]),
        "the number reached PVE as one"
    );
    let again = env.plan().await;
    assert!(again.contains("No changes."), "{again}");
    // A new trigger takes the time again; the other values stay.
    env.write_tf(&tf("debian-13"));
    let plan = env.plan().await;
    assert!(plan.contains("time_static.born must be replaced"), "{plan}");
    assert!(
        !plan.contains("random_id.suffix must be replaced"),
        "{plan}"
    );
    env.apply().await;
    assert_eq!(stored(&env, "random_id.suffix").await.expect("id"), id);
    assert!(env.plan().await.contains("No changes."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_null_resource_keeps_its_id_until_a_trigger_changes_and_its_provisioner_never_runs() {
    let env = Env::start().await;
    let tf = |version: &str| {
        format!(
            r#"resource "null_resource" "configure" {{
  triggers = {{ version = "{version}" }}
  provisioner "local-exec" {{
    command = "touch ran"
  }}
}}
"#
        )
    };
    env.write_tf(&tf("1"));
    let plan = env.plan().await;
    assert!(
        plan.contains("null_resource.configure will be created"),
        "{plan}"
    );
    let applied = env.apply().await;
    assert!(
        text(&applied).contains("provisioner"),
        "the warning: {}",
        text(&applied)
    );
    assert!(!env.project().join("ran").exists() && !env.dir.path().join("ran").exists());
    let first = stored(&env, "null_resource.configure").await.expect("id")["id"].clone();
    assert!(first.parse::<u64>().is_ok(), "{first}");
    assert!(env.plan().await.contains("No changes."));
    env.write_tf(&tf("2"));
    let plan = env.plan().await;
    assert!(
        plan.contains("null_resource.configure must be replaced"),
        "{plan}"
    );
    env.apply().await;
    let second = stored(&env, "null_resource.configure").await.expect("id")["id"].clone();
    assert_ne!(first, second);
}
