//! The answers to `atlantis import` and `atlantis state rm`: what was taken into or removed
//! from atoll's state (Terraform's words where it has them), that nothing on the cluster
//! changed, that the project's saved plan was discarded, and the plan to comment next.

use serde::Serialize;

use super::pr::Unmet;
use super::template::render;

/// How a protected guest is protected, for the import reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Protection {
    /// Listed in `protect.guests`.
    Configured,
    /// atoll runs in it.
    OwnGuest,
}

/// What `atlantis import` did.
#[derive(Debug, Clone, Serialize)]
pub struct ImportView<'a> {
    pub executable: &'a str,
    /// The project (`dir: . workspace: default`, or its name).
    pub label: &'a str,
    /// The flags that plan the project again (`-d envs/dev`).
    pub flags: &'a str,
    pub address: &'a str,
    pub id: &'a str,
    /// The object in words: `CT 120 on node pve`.
    pub what: &'a str,
    pub protected: Option<Protection>,
    /// A saved plan of the project was discarded.
    pub discarded: bool,
}

/// The answer to a successful `atlantis import`.
pub fn imported(view: &ImportView<'_>) -> String {
    render("import.md", view)
}

/// What `atlantis state rm` did.
#[derive(Debug, Clone, Serialize)]
pub struct StateRmView<'a> {
    pub executable: &'a str,
    pub label: &'a str,
    pub flags: &'a str,
    /// Every instance removed, in state order.
    pub removed: &'a [String],
    /// Guests among them (they stay on the cluster, unmanaged).
    pub guests: usize,
    pub discarded: bool,
}

/// The answer to a successful `atlantis state rm`.
pub fn state_removed(view: &StateRmView<'_>) -> String {
    render("state_rm.md", view)
}

/// The import refusal when `import_requirements` are unmet; `again` is the comment to repeat.
pub fn import_unmet(again: &str, unmet: &[Unmet]) -> String {
    #[derive(Serialize)]
    struct Line {
        name: &'static str,
        why: String,
    }
    #[derive(Serialize)]
    struct View<'a> {
        again: &'a str,
        unmet: Vec<Line>,
    }
    let unmet = unmet
        .iter()
        .map(|u| Line {
            name: u.requirement(),
            why: u.why(),
        })
        .collect();
    render("import_unmet.md", &View { again, unmet })
}

/// The refusal of `import` or `state rm` (`verb`) to a commenter without write access.
pub fn state_no_permission(verb: &str, user: &str) -> String {
    #[derive(Serialize)]
    struct View<'a> {
        verb: &'a str,
        user: &'a str,
    }
    render("state_no_permission.md", &View { verb, user })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import_view(protected: Option<Protection>) -> String {
        imported(&ImportView {
            executable: "atlantis",
            label: "dir: . workspace: default",
            flags: "-d .",
            address: "proxmox_virtual_environment_container.web",
            id: "pve/120",
            what: "CT 120 on node pve",
            protected,
            discarded: true,
        })
    }

    #[test]
    fn import_reply_says_state_only_and_what_to_plan() {
        let body = import_view(None);
        assert!(body.contains("Import complete"), "{body}");
        assert!(
            body.contains("`proxmox_virtual_environment_container.web`"),
            "{body}"
        );
        assert!(body.contains("nothing on the cluster changed"), "{body}");
        assert!(body.contains("`atlantis plan -d .`"), "{body}");
        assert!(body.contains("discarded"), "{body}");
        assert!(!body.contains("protected"), "{body}");
        let own = import_view(Some(Protection::OwnGuest));
        assert!(own.contains("atoll runs in this guest"), "{own}");
    }

    #[test]
    fn state_rm_reply_lists_removed_instances_as_terraform_does() {
        let removed = vec![
            "proxmox_virtual_environment_container.web".to_owned(),
            "random_password.db".to_owned(),
        ];
        let body = state_removed(&StateRmView {
            executable: "atlantis",
            label: "dir: . workspace: default",
            flags: "-d .",
            removed: &removed,
            guests: 1,
            discarded: false,
        });
        assert!(
            body.contains("Removed proxmox_virtual_environment_container.web\n"),
            "{body}"
        );
        assert!(
            body.contains("Successfully removed 2 resource instance(s)."),
            "{body}"
        );
        assert!(body.contains("adopts it again"), "{body}");
    }

    #[test]
    fn user_text_is_escaped() {
        let body = state_no_permission("import", "@admins <img src=x>");
        assert!(!body.contains("@admins") && !body.contains('<'), "{body}");
    }
}
