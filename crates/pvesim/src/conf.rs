//! One guest's configuration file as PVE keeps it: current keys, a `[pve:pending]` section
//! (with `delete`), the raw text `write_pct_config` would produce and its SHA-1 `digest`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};
use sha1::{Digest, Sha1};

use super::schema;

/// Config keys and values as stored in the file.
pub(crate) type Keys = BTreeMap<String, String>;

/// A guest config: current section and pending section.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Conf {
    pub(crate) main: Keys,
    pub(crate) pending: Keys,
}

impl Conf {
    /// The file text, section by section, like `write_pct_config`.
    pub(crate) fn raw(&self) -> String {
        let mut raw = section(&self.main);
        if !self.pending.is_empty() {
            raw.push_str("\n[pve:pending]\n");
            raw.push_str(&section(&self.pending));
        }
        raw
    }

    /// `sha1_hex` of the raw text.
    pub(crate) fn digest(&self) -> String {
        hex::encode(Sha1::digest(self.raw().as_bytes()))
    }

    /// Keys queued for deletion (`pending.delete`), with their force flag.
    pub(crate) fn pending_delete(&self) -> BTreeMap<String, bool> {
        self.pending
            .get("delete")
            .map(|d| parse_pending_delete(d))
            .unwrap_or_default()
    }

    pub(crate) fn set_pending_delete(&mut self, deletes: &BTreeMap<String, bool>) {
        if deletes.is_empty() {
            self.pending.remove("delete");
        } else {
            let text: Vec<String> = deletes
                .iter()
                .map(|(k, force)| if *force { format!("!{k}") } else { k.clone() })
                .collect();
            self.pending.insert("delete".to_owned(), text.join(","));
        }
    }

    pub(crate) fn add_to_pending_delete(&mut self, key: &str) {
        let mut deletes = self.pending_delete();
        deletes.insert(key.to_owned(), false);
        self.set_pending_delete(&deletes);
    }

    pub(crate) fn remove_from_pending_delete(&mut self, key: &str) {
        let mut deletes = self.pending_delete();
        if deletes.remove(key).is_some() {
            self.set_pending_delete(&deletes);
        }
    }

    /// `cleanup_pending`: drop pending values string-equal to current ones, and queued deletes
    /// of keys that are not set.
    pub(crate) fn cleanup_pending(&mut self) {
        let main = &self.main;
        self.pending
            .retain(|k, v| k == "delete" || main.get(k) != Some(v));
        let deletes: BTreeMap<String, bool> = self
            .pending_delete()
            .into_iter()
            .filter(|(k, _)| self.main.contains_key(k))
            .collect();
        self.set_pending_delete(&deletes);
    }

    /// `load_current_config`: with `current` the live values, otherwise pending merged in.
    pub(crate) fn view(&self, current: bool) -> Keys {
        let mut keys = self.main.clone();
        keys.retain(|k, v| k != "description" || !v.is_empty());
        if !current {
            for (k, v) in self.pending.iter().filter(|(k, _)| *k != "delete") {
                keys.insert(k.clone(), v.clone());
            }
            for k in self.pending_delete().keys() {
                keys.remove(k);
            }
        }
        keys
    }

    /// The JSON object GET `config` returns, with the digest.
    pub(crate) fn to_json(&self, current: bool) -> Value {
        let mut obj: Map<String, Value> = self
            .view(current)
            .iter()
            .map(|(k, v)| (k.clone(), schema::typed(k, v)))
            .collect();
        obj.insert("digest".to_owned(), Value::from(self.digest()));
        Value::Object(obj)
    }

    /// `config_with_pending_array`, the shape of GET `pending`.
    pub(crate) fn pending_array(&self) -> Value {
        let mut deletes = self.pending_delete();
        let mut out = Vec::new();
        let mut seen = BTreeSet::new();
        // the same keys `config?current=1` shows (an empty description is not in the file)
        let mut main = self.view(true);
        main.insert("digest".to_owned(), self.digest());
        for (key, value) in &main {
            let mut item = Map::new();
            item.insert("key".to_owned(), Value::from(key.clone()));
            item.insert("value".to_owned(), schema::typed(key, value));
            if let Some(p) = self.pending.get(key).filter(|_| key != "delete") {
                item.insert("pending".to_owned(), schema::typed(key, p));
                seen.insert(key.clone());
            }
            if let Some(force) = deletes.remove(key) {
                item.insert("delete".to_owned(), Value::from(if force { 2 } else { 1 }));
            }
            out.push(Value::Object(item));
        }
        for (key, value) in self
            .pending
            .iter()
            .filter(|(k, _)| *k != "delete" && !seen.contains(*k))
        {
            out.push(serde_json::json!({ "key": key, "pending": schema::typed(key, value) }));
        }
        for (key, force) in deletes {
            out.push(serde_json::json!({ "key": key, "delete": if force { 2 } else { 1 } }));
        }
        Value::Array(out)
    }
}

/// `parse_pending_delete`: `a,!b c;d` → {a: false, b: true, c: false, d: false}.
pub(crate) fn parse_pending_delete(text: &str) -> BTreeMap<String, bool> {
    text.split(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(|e| match e.strip_prefix('!') {
            Some(k) => (k.to_owned(), true),
            None => (e.to_owned(), false),
        })
        .collect()
}

/// The description as PVE reads it back: one `#` line per line, each ending in `\n`.
pub(crate) fn normalize_description(text: &str) -> Option<String> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    if lines.is_empty() {
        return None;
    }
    Some(lines.iter().map(|l| format!("{l}\n")).collect())
}

fn section(keys: &Keys) -> String {
    let mut raw = String::new();
    if let Some(descr) = keys.get("description") {
        for line in descr.lines() {
            raw.push('#');
            raw.push_str(line);
            raw.push('\n');
        }
    }
    for (k, v) in keys
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "description" | "env" | "digest"))
    {
        raw.push_str(&format!("{k}: {v}\n"));
    }
    if let Some(env) = keys.get("env") {
        for var in env.split('\0').filter(|v| !v.is_empty()) {
            raw.push_str(&format!("lxc.environment.runtime: {var}\n"));
        }
    }
    raw
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(main: &[(&str, &str)], pending: &[(&str, &str)]) -> Conf {
        let map = |kv: &[(&str, &str)]| {
            kv.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        Conf {
            main: map(main),
            pending: map(pending),
        }
    }

    #[test]
    fn raw_text_has_description_comment_and_pending_section() {
        let c = conf(
            &[
                ("memory", "512"),
                ("description", "hi\n"),
                ("arch", "amd64"),
            ],
            &[("delete", "mp0")],
        );
        assert_eq!(
            c.raw(),
            "#hi\narch: amd64\nmemory: 512\n\n[pve:pending]\ndelete: mp0\n"
        );
    }

    #[test]
    fn digest_changes_when_the_file_changes() {
        let a = conf(&[("memory", "512")], &[]);
        let b = conf(&[("memory", "1024")], &[]);
        assert_eq!(a.digest().len(), 40);
        assert_ne!(a.digest(), b.digest());
    }

    #[test]
    fn view_without_current_merges_pending_and_drops_deletes() {
        let c = conf(
            &[("features", "nesting=1"), ("mp0", "x,mp=/m")],
            &[("features", "nesting=1,keyctl=1"), ("delete", "mp0")],
        );
        let merged = c.view(false);
        assert_eq!(
            merged.get("features").map(String::as_str),
            Some("nesting=1,keyctl=1")
        );
        assert!(!merged.contains_key("mp0"));
        assert_eq!(
            c.view(true).get("features").map(String::as_str),
            Some("nesting=1")
        );
    }

    #[test]
    fn cleanup_pending_drops_values_equal_to_current() {
        let mut c = conf(
            &[("cores", "2")],
            &[("cores", "2"), ("ostype", "debian"), ("delete", "swap")],
        );
        c.cleanup_pending();
        assert_eq!(c.pending, conf(&[], &[("ostype", "debian")]).pending);
    }
}
