//! Module versions and version constraints as Terraform reads them for registry modules
//! (hashicorp/go-version): `1.2.3`, `v1.2`, `1.0.0-beta.1`; constraints `= != > < >= <= ~>`
//! joined by commas. A version with a pre-release part matches only a constraint that names a
//! pre-release of the same version; `~>` lets only the last given part grow.

use std::cmp::Ordering;

/// A version: numeric parts (at least three, padded with zeros) and an optional pre-release.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Version {
    parts: Vec<u64>,
    /// How many parts were written (`~> 1.2` grows the second).
    given: usize,
    pre: String,
    text: String,
}

impl Version {
    pub(crate) fn parse(s: &str) -> Option<Self> {
        let text = s.trim();
        let body = text.strip_prefix('v').unwrap_or(text);
        let body = body.split_once('+').map_or(body, |(b, _)| b);
        let (nums, pre) = match body.split_once('-') {
            Some((n, p))
                if !p.is_empty()
                    && p.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-') =>
            {
                (n, p.to_owned())
            }
            Some(_) => return None,
            None => (body, String::new()),
        };
        if text.split_once('+').is_some_and(|(_, meta)| {
            meta.is_empty()
                || !meta
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        }) {
            return None;
        }
        let mut parts = nums
            .split('.')
            .map(|p| {
                (!p.is_empty() && p.len() <= 19 && p.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| p.parse().ok())
                    .flatten()
            })
            .collect::<Option<Vec<u64>>>()?;
        let given = parts.len();
        if given == 0 || given > 8 {
            return None;
        }
        while parts.len() < 3 {
            parts.push(0);
        }
        Some(Self {
            parts,
            given,
            pre,
            text: text.to_owned(),
        })
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    fn is_pre(&self) -> bool {
        !self.pre.is_empty()
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        let n = self.parts.len().max(other.parts.len());
        for i in 0..n {
            let (a, b) = (
                self.parts.get(i).copied().unwrap_or(0),
                other.parts.get(i).copied().unwrap_or(0),
            );
            if a != b {
                return a.cmp(&b);
            }
        }
        match (self.is_pre(), other.is_pre()) {
            (false, false) => Ordering::Equal,
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (true, true) => compare_pre(&self.pre, &other.pre),
        }
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Pre-release parts compared dot by dot, numbers as numbers and below words.
fn compare_pre(a: &str, b: &str) -> Ordering {
    let mut x = a.split('.');
    let mut y = b.split('.');
    loop {
        match (x.next(), y.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) => {
                let o = match (p.parse::<u64>(), q.parse::<u64>()) {
                    (Ok(m), Ok(n)) => m.cmp(&n),
                    (Ok(_), Err(_)) => Ordering::Less,
                    (Err(_), Ok(_)) => Ordering::Greater,
                    (Err(_), Err(_)) => p.cmp(q),
                };
                if o != Ordering::Equal {
                    return o;
                }
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Gt,
    Lt,
    Ge,
    Le,
    Pessimistic,
}

/// A version constraint: every part must hold.
#[derive(Clone, Debug)]
pub(crate) struct Constraint {
    parts: Vec<(Op, Version)>,
}

impl Constraint {
    /// Parses `">= 1.0, < 2.0"`; `None` when a part is not a constraint.
    pub(crate) fn parse(s: &str) -> Option<Self> {
        let mut parts = Vec::new();
        for piece in s.split(',') {
            let piece = piece.trim();
            let (op, rest) = [
                ("~>", Op::Pessimistic),
                (">=", Op::Ge),
                ("<=", Op::Le),
                ("!=", Op::Ne),
                (">", Op::Gt),
                ("<", Op::Lt),
                ("=", Op::Eq),
            ]
            .iter()
            .find_map(|(p, op)| piece.strip_prefix(p).map(|r| (*op, r)))
            .unwrap_or((Op::Eq, piece));
            parts.push((op, Version::parse(rest.trim())?));
        }
        Some(Self { parts })
    }

    pub(crate) fn allows(&self, v: &Version) -> bool {
        self.parts
            .iter()
            .all(|(op, c)| prerelease_ok(v, c, *op) && holds(*op, v, c))
    }
}

/// go-version's pre-release rule.
fn prerelease_ok(v: &Version, c: &Version, op: Op) -> bool {
    match (v.is_pre(), c.is_pre()) {
        (true, true) => v.parts == c.parts,
        (true, false) => false,
        (false, true) => op != Op::Pessimistic,
        (false, false) => true,
    }
}

fn holds(op: Op, v: &Version, c: &Version) -> bool {
    match op {
        Op::Eq => v == c || v.cmp(c) == Ordering::Equal,
        Op::Ne => v.cmp(c) != Ordering::Equal,
        Op::Gt => v > c,
        Op::Lt => v < c,
        Op::Ge => v >= c,
        Op::Le => v <= c,
        Op::Pessimistic => {
            // go-version: a version less specific than the constraint never matches.
            if v < c || c.is_pre() != v.is_pre() || c.given > v.parts.len() {
                return false;
            }
            let last = c.given - 1;
            v.parts[..last] == c.parts[..last] && v.parts[last] >= c.parts[last]
        }
    }
}

/// The newest of `versions` that `constraint` allows (no constraint: the newest without a
/// pre-release).
pub(crate) fn newest<'v>(
    versions: &'v [Version],
    constraint: Option<&Constraint>,
) -> Option<&'v Version> {
    versions
        .iter()
        .filter(|v| match constraint {
            Some(c) => c.allows(v),
            None => !v.is_pre(),
        })
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pick(constraint: &str, versions: &[&str]) -> Option<String> {
        let vs: Vec<Version> = versions
            .iter()
            .map(|v| Version::parse(v).expect(v))
            .collect();
        let c = Constraint::parse(constraint).expect(constraint);
        newest(&vs, Some(&c)).map(|v| v.as_str().to_owned())
    }

    #[test]
    fn the_pessimistic_operator_lets_the_last_given_part_grow() {
        let all = ["1.0.0", "1.1.0", "1.2.0", "1.2.9", "1.3.0", "2.0.0"];
        assert_eq!(pick("~> 1.2", &all).as_deref(), Some("1.3.0"));
        assert_eq!(pick("~> 1.2.0", &all).as_deref(), Some("1.2.9"));
        assert_eq!(pick("~> 2.1", &all), None);
        assert_eq!(pick(">= 1.0, < 2.0", &all).as_deref(), Some("1.3.0"));
        assert_eq!(pick("!= 2.0.0", &all).as_deref(), Some("1.3.0"));
        assert_eq!(pick("1.1.0", &all).as_deref(), Some("1.1.0"));
        assert_eq!(pick("= v1.1", &all).as_deref(), Some("1.1.0"));
    }

    #[test]
    fn pre_releases_match_only_when_named() {
        let all = ["1.0.0", "1.1.0-beta.1", "1.1.0-beta.2"];
        assert_eq!(pick(">= 1.0.0", &all).as_deref(), Some("1.0.0"));
        assert_eq!(pick("1.1.0-beta.1", &all).as_deref(), Some("1.1.0-beta.1"));
        assert_eq!(
            pick(">= 1.1.0-beta.1", &all).as_deref(),
            Some("1.1.0-beta.2")
        );
        let vs: Vec<Version> = all.iter().filter_map(|v| Version::parse(v)).collect();
        assert_eq!(newest(&vs, None).map(Version::as_str), Some("1.0.0"));
    }

    #[test]
    fn a_constraint_more_specific_than_every_version_matches_none_and_never_panics() {
        assert_eq!(pick("~> 1.0.0.0", &["1.0.0", "1.0.1"]), None);
        assert_eq!(pick("~> 0.0.0.0.1", &["0.0.1", "2.0.0"]), None);
        assert_eq!(pick("~> 1.0.0.0", &["1.0.0.5"]).as_deref(), Some("1.0.0.5"));
    }

    #[test]
    fn bad_constraints_are_refused() {
        assert!(Constraint::parse("~> one").is_none());
        assert!(Constraint::parse(">= 1.0,").is_none());
        assert!(Version::parse("1.2.3-").is_none());
        assert!(Version::parse("1.2.3-../x").is_none());
        assert!(Version::parse("1.2.3+a/b").is_none());
    }
}
