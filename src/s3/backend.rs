//! A project's `backend "s3"` block and the server's `terraform_state.s3` settings, turned into
//! the one object holding Terraform's state for a workspace, as Terraform's S3 backend finds it:
//! `key` for the default workspace, `<workspace_key_prefix>/<workspace>/<key>` for another
//! (prefix `env:` by default). The block chooses the bucket and key only: its endpoint must be
//! one the settings allow, and the key pair is always the settings'.

use tfconfig::backend::Backend;

use super::{Credentials, Location, endpoint_url};
use crate::config::S3Settings;

/// The way out, whenever atoll cannot read the state itself.
const PULL: &str = "run `terraform state pull > terraform.tfstate` where Terraform is set up, \
                    then `atoll state import-terraform terraform.tfstate`";

/// What to read, with whom, and what in the block was not used.
#[derive(Debug)]
pub struct Resolved {
    pub location: Location,
    pub credentials: Option<Credentials>,
    pub notes: Vec<String>,
}

/// Resolves the object for `workspace`; every refusal names the fix.
pub fn resolve(
    block: Option<&Backend>,
    workspace: &str,
    settings: &S3Settings,
) -> Result<Resolved, String> {
    let Some(block) = block else {
        return Err(format!(
            "the project has no `terraform {{ backend \"s3\" {{ ... }} }}` block, so atoll does \
             not know where Terraform keeps its state; add the block Terraform used, or {PULL}"
        ));
    };
    if block.block != "backend" || block.kind != "s3" {
        let named = if block.block == "cloud" {
            "a `cloud` block (HCP Terraform)".to_owned()
        } else {
            format!("backend \"{}\"", block.kind)
        };
        return Err(format!(
            "the project's state is in {named}; atoll reads Terraform's state straight from an \
             S3-compatible bucket (backend \"s3\": AWS S3, Garage, MinIO, Ceph) only; for any \
             other backend {PULL}"
        ));
    }
    let bad = |e: String| format!("the backend \"s3\" block: {e}");
    let required = |name: &str| -> Result<String, String> {
        match block.string(name).map_err(bad)? {
            Some(v) if !v.is_empty() => Ok(v.to_owned()),
            _ => Err(format!(
                "the backend \"s3\" block has no \"{name}\"; Terraform needs it too: add it"
            )),
        }
    };
    let bucket = required("bucket")?;
    let key = required("key")?;
    let key = if workspace == "default" {
        key
    } else {
        let prefix = block
            .string("workspace_key_prefix")
            .map_err(bad)?
            .unwrap_or("env:");
        format!("{prefix}/{workspace}/{key}")
    };
    let named = match block.string("endpoints.s3").map_err(bad)? {
        Some(e) => Some(e),
        None => block.string("endpoint").map_err(bad)?,
    };
    let endpoint = endpoint(named, settings)?;
    let region = match block.string("region").map_err(bad)? {
        Some(r) => r.to_owned(),
        None => settings
            .region
            .clone()
            .unwrap_or_else(|| "us-east-1".to_owned()),
    };
    if !super::valid_region(&region) {
        return Err(bad(format!("\"region\" {region:?} is not a region name")));
    }
    let path_style = match block.bool("use_path_style").map_err(bad)? {
        Some(b) => b,
        None => block
            .bool("force_path_style")
            .map_err(bad)?
            .unwrap_or(false),
    };
    let credentials = match (&settings.access_key_id, &settings.secret_access_key) {
        (Some(id), Some(secret)) => Some(Credentials {
            access_key_id: id.clone(),
            secret_access_key: secret.clone(),
        }),
        _ => None,
    };
    let ignored: Vec<&str> = [
        "access_key",
        "secret_key",
        "token",
        "profile",
        "shared_credentials_file",
        "role_arn",
    ]
    .into_iter()
    .filter(|k| {
        block.settings.contains_key(*k)
            || block.not_literal.iter().any(|p| p == k)
            || block
                .settings
                .keys()
                .any(|p| p.starts_with(&format!("{k}.")))
    })
    .collect();
    let mut notes = Vec::new();
    if !ignored.is_empty() {
        notes.push(format!(
            "the backend block's {} not used: atoll signs with the key pair in its own \
             settings (terraform_state.s3), never with credentials from a repository",
            ignored.join(", ") + if ignored.len() == 1 { " is" } else { " are" }
        ));
    }
    Ok(Resolved {
        location: Location {
            endpoint,
            bucket,
            key,
            region,
            path_style,
        },
        credentials,
        notes,
    })
}

/// The endpoint to use: the block's, when the settings allow it; else the one configured.
fn endpoint(named: Option<&str>, settings: &S3Settings) -> Result<reqwest::Url, String> {
    let allowed: Vec<reqwest::Url> = settings
        .endpoints
        .iter()
        .filter_map(|e| endpoint_url(e).ok())
        .collect();
    let list = settings.endpoints.join(", ");
    match named {
        None => match allowed.as_slice() {
            [only] => Ok(only.clone()),
            [] => Err(
                "no S3 endpoint is configured: set terraform_state.s3.endpoints (and the key \
                 pair) in atoll's settings to the S3 service Terraform's state is in"
                    .to_owned(),
            ),
            _ => Err(format!(
                "the backend block names no endpoint and several are configured ({list}); \
                 name one in the block with `endpoints = {{ s3 = \"URL\" }}`"
            )),
        },
        Some(text) => {
            let url =
                endpoint_url(text).map_err(|e| format!("the backend block's endpoint: {e}"))?;
            let same = |a: &reqwest::Url| {
                a.as_str().trim_end_matches('/') == url.as_str().trim_end_matches('/')
            };
            allowed.iter().find(|a| same(a)).cloned().ok_or_else(|| {
                format!(
                    "the backend block's endpoint {text} is not one of terraform_state.s3.endpoints \
                     ({}); atoll reads only from endpoints its settings allow, so nothing in a \
                     repository chooses a network address: add it there if it is yours",
                    if list.is_empty() { "none configured" } else { &list }
                )
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tfconfig::backend::Literal;

    fn block(pairs: &[(&str, Literal)]) -> Backend {
        Backend {
            block: "backend".to_owned(),
            kind: "s3".to_owned(),
            settings: pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
            not_literal: Vec::new(),
        }
    }

    fn s(v: &str) -> Literal {
        Literal::String(v.to_owned())
    }

    fn settings(endpoints: &[&str]) -> S3Settings {
        S3Settings {
            endpoints: endpoints.iter().map(|e| (*e).to_owned()).collect(),
            region: Some("garage".to_owned()),
            access_key_id: Some("GK1".to_owned()),
            secret_access_key: Some("top-secret".to_owned().into()),
        }
    }

    #[test]
    fn the_key_follows_the_workspace_and_the_configured_endpoint_is_used() {
        let b = block(&[("bucket", s("tf")), ("key", s("infra.tfstate"))]);
        let r = resolve(Some(&b), "default", &settings(&["http://garage:3900"])).expect("ok");
        assert_eq!(r.location.key, "infra.tfstate");
        assert_eq!(r.location.endpoint.as_str(), "http://garage:3900/");
        assert_eq!(r.location.region, "garage");
        assert!(!r.location.path_style);
        let r = resolve(Some(&b), "prod", &settings(&["http://garage:3900"])).expect("ok");
        assert_eq!(r.location.key, "env:/prod/infra.tfstate");
        let b = block(&[
            ("bucket", s("tf")),
            ("key", s("infra.tfstate")),
            ("workspace_key_prefix", s("ws")),
            ("region", s("eu-west-1")),
            ("force_path_style", Literal::Bool(true)),
            ("endpoint", s("http://GARAGE:3900/")),
            ("secret_key", s("from-the-repo")),
        ]);
        let r = resolve(
            Some(&b),
            "prod",
            &settings(&["http://x:1", "http://garage:3900"]),
        )
        .expect("ok");
        assert_eq!(r.location.key, "ws/prod/infra.tfstate");
        assert_eq!(r.location.region, "eu-west-1");
        assert!(r.location.path_style);
        assert_eq!(r.location.endpoint.as_str(), "http://garage:3900/");
        assert_eq!(r.credentials.expect("pair").access_key_id, "GK1");
        assert!(
            r.notes[0].contains("secret_key is not used"),
            "{:?}",
            r.notes
        );
    }

    #[test]
    fn an_endpoint_the_settings_do_not_allow_is_refused() {
        let b = block(&[
            ("bucket", s("tf")),
            ("key", s("k")),
            ("endpoints.s3", s("http://169.254.169.254")),
        ]);
        let err =
            resolve(Some(&b), "default", &settings(&["http://garage:3900"])).expect_err("refused");
        assert!(
            err.contains("endpoint http://169.254.169.254 is not one of terraform_state.s3.endpoints (http://garage:3900)"),
            "{err}"
        );
        let none = block(&[("bucket", s("tf")), ("key", s("k"))]);
        let err = resolve(Some(&none), "default", &settings(&[])).expect_err("none");
        assert!(err.contains("set terraform_state.s3.endpoints"), "{err}");
    }

    #[test]
    fn other_backends_no_backend_and_missing_settings_are_refused_with_the_way_out() {
        let err = resolve(None, "default", &settings(&["http://g:1"])).expect_err("none");
        assert!(
            err.contains("terraform state pull > terraform.tfstate"),
            "{err}"
        );
        let mut gcs = block(&[("bucket", s("tf"))]);
        gcs.kind = "gcs".to_owned();
        let err = resolve(Some(&gcs), "default", &settings(&["http://g:1"])).expect_err("gcs");
        assert!(err.contains("backend \"gcs\""), "{err}");
        assert!(err.contains("terraform state pull"), "{err}");
        let err = resolve(
            Some(&block(&[("bucket", s("tf"))])),
            "default",
            &settings(&["http://g:1"]),
        )
        .expect_err("no key");
        assert!(err.contains("has no \"key\""), "{err}");
        let mut computed = block(&[("key", s("k"))]);
        computed.not_literal.push("bucket".to_owned());
        let err =
            resolve(Some(&computed), "default", &settings(&["http://g:1"])).expect_err("computed");
        assert!(err.contains("\"bucket\" is not a literal value"), "{err}");
    }
}
