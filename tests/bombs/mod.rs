//! The resource bombs of issue 11, as small generators: each is the files (and symbolic links)
//! of a checkout, written to a directory by [`Bomb::write`] or pushed through the fake forge
//! (`open_pr_with_links(.., &bomb.file_refs(), &bomb.link_refs())`). The tfconfig tests and a
//! whole-server RSS test share them.

use std::fmt::Write as _;
use std::path::Path;

/// Files and links of a checkout, paths relative to its root.
#[derive(Clone, Debug, Default)]
pub(crate) struct Bomb {
    pub(crate) files: Vec<(String, String)>,
    pub(crate) links: Vec<(String, String)>,
}

impl Bomb {
    /// The same bomb under `dir/` (`envs/dev`), for a PR that also has other projects.
    pub(crate) fn under(mut self, dir: &str) -> Self {
        let dir = dir.trim_end_matches('/');
        for (p, _) in self.files.iter_mut().chain(self.links.iter_mut()) {
            *p = format!("{dir}/{p}");
        }
        self
    }

    /// Writes the files and links under `root`.
    pub(crate) fn write(&self, root: &Path) {
        for (path, content) in &self.files {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
            std::fs::write(&p, content).expect("write bomb file");
        }
        for (path, target) in &self.links {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
            std::os::unix::fs::symlink(target, &p).expect("write bomb link");
        }
    }

    /// The files as the fake forge takes them.
    pub(crate) fn file_refs(&self) -> Vec<(&str, &str)> {
        self.files
            .iter()
            .map(|(p, c)| (p.as_str(), c.as_str()))
            .collect()
    }

    /// The links as the fake forge takes them.
    pub(crate) fn link_refs(&self) -> Vec<(&str, &str)> {
        self.links
            .iter()
            .map(|(p, c)| (p.as_str(), c.as_str()))
            .collect()
    }
}

/// A container resource named `name` (one per module instance in the nested bomb).
pub(crate) fn container(name: &str) -> String {
    format!(
        r#"resource "proxmox_virtual_environment_container" "{name}" {{
  node_name = "pve"
  operating_system {{
    template_file_id = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"
    type             = "debian"
  }}
}}
"#
    )
}

/// Finding 1: `atlantis.yaml` is a symbolic link to `/dev/zero` (plus one valid project).
pub(crate) fn atlantis_yaml_to_dev_zero() -> Bomb {
    Bomb {
        files: vec![("envs/dev/main.tf".to_owned(), container("web"))],
        links: vec![("atlantis.yaml".to_owned(), "/dev/zero".to_owned())],
    }
}

/// Finding 1, evaluator side: a `.tf` file that is a symbolic link to `/dev/zero`.
pub(crate) fn tf_file_to_dev_zero() -> Bomb {
    Bomb {
        files: vec![("main.tf".to_owned(), container("web"))],
        links: vec![("zero.tf".to_owned(), "/dev/zero".to_owned())],
    }
}

/// Finding 2: fifteen small files, each level calling the next three times (3^14 module
/// instances, no cycle).
pub(crate) fn module_fan_out() -> Bomb {
    const LEVELS: usize = 14;
    let calls = |source: &str| {
        ["a", "b", "c"].iter().fold(String::new(), |mut s, n| {
            let _ = writeln!(s, "module \"{n}\" {{\n  source = \"{source}\"\n}}");
            s
        })
    };
    let mut files = vec![("main.tf".to_owned(), calls("./l1"))];
    for level in 1..LEVELS {
        files.push((
            format!("l{level}/main.tf"),
            calls(&format!("../l{}", level + 1)),
        ));
    }
    files.push((
        format!("l{LEVELS}/main.tf"),
        "locals {\n  leaf = true\n}\n".to_owned(),
    ));
    Bomb {
        files,
        links: Vec::new(),
    }
}

/// Finding 3: 100 x 100 x 100 module instances through nested `for_each`, one container each.
pub(crate) fn nested_module_for_each() -> Bomb {
    let each = "toset([for i in range(100) : tostring(i)])";
    let call = |name: &str, source: &str| {
        format!("module \"{name}\" {{\n  source   = \"{source}\"\n  for_each = {each}\n}}\n")
    };
    Bomb {
        files: vec![
            ("main.tf".to_owned(), call("a", "./a")),
            ("a/main.tf".to_owned(), call("b", "../b")),
            ("b/main.tf".to_owned(), call("c", "../c")),
            ("c/main.tf".to_owned(), container("ct")),
        ],
        links: Vec::new(),
    }
}

/// Finding 8: one expression that builds a million 4 KiB strings (4 GB).
pub(crate) fn formatlist_of_padded_strings() -> Bomb {
    Bomb {
        files: vec![(
            "main.tf".to_owned(),
            "locals {\n  padded = formatlist(\"%4096s\", flatten([for a in range(1000) : [for b in range(1000) : a * 1000 + b]]))\n}\n".to_owned(),
        )],
        links: Vec::new(),
    }
}

/// Finding 13: a 3.9 MB line with an error at its end.
pub(crate) fn long_failing_line() -> Bomb {
    let long = "a".repeat(3_900_000);
    Bomb {
        files: vec![(
            "main.tf".to_owned(),
            format!("locals {{\n  x = [\"{long}\", no_such_function()]\n}}\n"),
        )],
        links: Vec::new(),
    }
}
