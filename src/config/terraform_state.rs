//! `terraform_state`: where `atoll state import-terraform --from-backend` may read Terraform's
//! state from. Nothing from a repository chooses a network address or a credential: a
//! project's `backend "s3"` block names the bucket and key, and its endpoint must be one of
//! these.

use secrecy::SecretString;

use super::tree::Reader;

/// The `terraform_state:` section.
#[derive(Debug, Clone, Default)]
pub struct TerraformStateSettings {
    pub s3: S3Settings,
}

/// `terraform_state.s3`: an S3-compatible service (AWS S3, Garage, MinIO, Ceph RGW).
#[derive(Debug, Clone, Default)]
pub struct S3Settings {
    /// `terraform_state.s3.endpoints`: the endpoint URLs a backend block may name; with one,
    /// a block naming none uses it.
    pub endpoints: Vec<String>,
    /// `terraform_state.s3.region`: the signing region when the block names none.
    pub region: Option<String>,
    /// `terraform_state.s3.access_key_id`.
    pub access_key_id: Option<String>,
    /// `terraform_state.s3.secret_access_key` (or `..._file`): redacted in Debug.
    pub secret_access_key: Option<SecretString>,
}

pub(super) fn read_terraform_state(r: &mut Reader<'_>) -> TerraformStateSettings {
    let endpoints: Vec<String> = r
        .strings("terraform_state.s3.endpoints")
        .into_iter()
        .map(|e| e.trim().to_owned())
        .collect();
    for (i, e) in endpoints.iter().enumerate() {
        if let Err(why) = crate::s3::endpoint_url(e) {
            r.problem(&format!("terraform_state.s3.endpoints[{i}]"), why);
        }
    }
    let region = r
        .opt_string("terraform_state.s3.region")
        .map(|s| s.trim().to_owned());
    if region.as_ref().is_some_and(|s| !crate::s3::valid_region(s)) {
        r.problem(
            "terraform_state.s3.region",
            "must be a region name such as us-east-1 or garage (letters, digits, - and _)",
        );
    }
    let access_key_id = r
        .opt_string("terraform_state.s3.access_key_id")
        .map(|s| s.trim().to_owned());
    let secret_access_key = r.secret("terraform_state.s3.secret_access_key");
    if access_key_id.is_some() != secret_access_key.is_some()
        && !r.has_problem_at("terraform_state.s3.secret_access_key")
    {
        r.problem(
            "terraform_state.s3.access_key_id",
            "set both terraform_state.s3.access_key_id and terraform_state.s3.secret_access_key \
             (or secret_access_key_file), or neither",
        );
    }
    TerraformStateSettings {
        s3: S3Settings {
            endpoints,
            region,
            access_key_id,
            secret_access_key,
        },
    }
}

#[cfg(test)]
mod tests {
    use secrecy::ExposeSecret as _;

    #[test]
    fn the_s3_section_comes_from_yaml_and_environment_and_its_secret_is_redacted() {
        let yaml = "terraform_state:\n  s3:\n    endpoints: [\"http://garage:3900\"]\n    region: garage\n";
        let env = [
            ("ATOLL_TERRAFORM_STATE__S3__ACCESS_KEY_ID", "GK123"),
            (
                "ATOLL_TERRAFORM_STATE__S3__SECRET_ACCESS_KEY",
                "s3cr3t-value",
            ),
        ];
        let loaded = crate::config::from_sources(yaml, env).expect("settings");
        let s3 = &loaded.settings.terraform_state.s3;
        assert_eq!(s3.endpoints, vec!["http://garage:3900".to_owned()]);
        assert_eq!(s3.region.as_deref(), Some("garage"));
        assert_eq!(s3.access_key_id.as_deref(), Some("GK123"));
        assert_eq!(
            s3.secret_access_key.as_ref().map(|s| s.expose_secret()),
            Some("s3cr3t-value")
        );
        assert!(!format!("{s3:?}").contains("s3cr3t-value"));
    }

    #[test]
    fn a_bad_endpoint_or_a_key_without_its_secret_is_a_problem_at_its_key() {
        let yaml = "terraform_state:\n  s3:\n    endpoints: [\"garage:3900\", \"ftp://x\"]\n    access_key_id: GK1\n";
        let err = crate::config::from_sources(yaml, []).expect_err("problems");
        let text = err.to_string();
        for key in [
            "terraform_state.s3.endpoints[0]",
            "terraform_state.s3.endpoints[1]",
            "terraform_state.s3.access_key_id",
        ] {
            assert!(text.contains(key), "{key} missing in {text}");
        }
    }
}
