//! Reading `atlantis.yaml` into a YAML tree while counting what the tree costs. YAML anchors and
//! aliases repeat what they name, so a file well under the size limit can describe a tree of
//! gigabytes ("billion laughs"). The tree is built value by value and reading stops as soon as it
//! passes the budget, before the tree exists. Anchors a real `atlantis.yaml` uses (a shared
//! `when_modified` list, a workflow) cost a few hundred values and pass untouched.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};
use serde_yaml_ng::value::{Tag, TaggedValue};
use serde_yaml_ng::{Mapping, Value};

/// Most values (scalars, lists, mappings, counted after alias expansion) one file may expand to.
pub(crate) const MAX_NODES: u64 = 200_000;
/// Most bytes of text the expanded scalars may hold together.
pub(crate) const MAX_TEXT_BYTES: u64 = 4 * 1024 * 1024;

/// Why a document could not be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The expanded tree would pass [`MAX_NODES`] or [`MAX_TEXT_BYTES`].
    TooExpanded,
    /// The text is not YAML (the parser's message).
    Syntax(String),
}

/// Parses `source` into a tree of at most [`MAX_NODES`] values and [`MAX_TEXT_BYTES`] of text.
pub(crate) fn parse(source: &str) -> Result<Value, ReadError> {
    let budget = Budget {
        nodes: Cell::new(MAX_NODES),
        text: Cell::new(MAX_TEXT_BYTES),
        spent: Cell::new(false),
    };
    let out = Node { budget: &budget }.deserialize(serde_yaml_ng::Deserializer::from_str(source));
    match out {
        Ok(value) => Ok(value),
        Err(_) if budget.spent.get() => Err(ReadError::TooExpanded),
        Err(e) => Err(ReadError::Syntax(e.to_string())),
    }
}

struct Budget {
    nodes: Cell<u64>,
    text: Cell<u64>,
    spent: Cell<bool>,
}

impl Budget {
    fn spend<E: de::Error>(&self, text: usize) -> Result<(), E> {
        let text = u64::try_from(text).unwrap_or(u64::MAX);
        let (nodes, left) = (self.nodes.get(), self.text.get());
        if self.spent.get() || nodes == 0 || text > left {
            self.spent.set(true);
            return Err(E::custom("atlantis.yaml expands to too large a tree"));
        }
        self.nodes.set(nodes - 1);
        self.text.set(left - text);
        Ok(())
    }
}

/// Builds one value of the tree, spending from the budget.
#[derive(Clone, Copy)]
struct Node<'a> {
    budget: &'a Budget,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML value")
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        self.budget.spend(0)?;
        Ok(Value::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Value, E> {
        self.budget.spend(0)?;
        Ok(Value::Number(n.into()))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Value, E> {
        self.budget.spend(0)?;
        Ok(Value::Number(n.into()))
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Value, E> {
        self.budget.spend(0)?;
        Ok(Value::Number(n.into()))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        self.budget.spend(s.len())?;
        Ok(Value::String(s.to_owned()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        self.budget.spend(s.len())?;
        Ok(Value::String(s))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.budget.spend(0)?;
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.budget.spend(0)?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Sequence(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.budget.spend(0)?;
        let mut mapping = Mapping::new();
        while let Some(key) = map.next_key_seed(self)? {
            if mapping.contains_key(&key) {
                return Err(de::Error::custom(format_args!(
                    "duplicate entry with key {}",
                    describe(&key)
                )));
            }
            let value = map.next_value_seed(self)?;
            mapping.insert(key, value);
        }
        Ok(Value::Mapping(mapping))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        let (tag, contents) = data.variant::<String>()?;
        self.budget.spend(tag.len())?;
        let value = contents.newtype_variant_seed(self)?;
        Ok(Value::Tagged(Box::new(TaggedValue {
            tag: Tag::new(tag),
            value,
        })))
    }
}

/// A short description of a duplicated key, for the error message.
fn describe(key: &Value) -> String {
    match key {
        Value::String(s) => format!("{s:?}"),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Null => "null".to_owned(),
        _ => "(a complex key)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `a0` holds `width` scalars, each next level `fan` aliases of the one before, and a padding
    /// list of `pad` scalars raises the library's own alias limit (100 jumps per event).
    fn laughs(width: usize, fan: usize, levels: usize, pad: usize) -> String {
        let mut text = format!("pad: [{}]\n", vec!["0"; pad].join(","));
        text.push_str(&format!("a0: &a0 [{}]\n", vec!["lol"; width].join(",")));
        for level in 1..=levels {
            let refs = vec![format!("*a{}", level - 1); fan].join(",");
            text.push_str(&format!("a{level}: &a{level} [{refs}]\n"));
        }
        text
    }

    #[test]
    fn the_library_alone_lets_a_large_expansion_through() {
        let text = laughs(300, 1000, 1, 0);
        assert!(text.len() < 8 * 1024, "{}", text.len());
        let theirs: Value = serde_yaml_ng::from_str(&text).expect("the library expands it");
        let expanded = theirs["a1"].as_sequence().map(Vec::len);
        assert_eq!(expanded, Some(1000));
        assert!(matches!(parse(&text), Err(ReadError::TooExpanded)));
    }

    #[test]
    fn billion_laughs_stop_at_the_budget() {
        // 1000 × 1000 × 1000 scalars from 40 KiB; about a million alias jumps, which the
        // library's own limit (100 per event) allows here.
        let text = laughs(1000, 1000, 2, 20_000);
        assert!(text.len() < 64 * 1024, "{}", text.len());
        assert!(matches!(parse(&text), Err(ReadError::TooExpanded)));
    }

    #[test]
    fn a_few_anchors_read_as_the_library_reads_them() {
        let text = "shared: &files [\"*.tf\", \"../modules/**/*.tf\"]\n\
                    projects:\n  - dir: a\n    when_modified: *files\n  - dir: b\n    \
                    when_modified: *files\n    tag: !custom x\n";
        let ours = parse(text).expect("parses");
        let theirs: Value = serde_yaml_ng::from_str(text).expect("parses");
        assert_eq!(ours, theirs);
    }

    #[test]
    fn duplicate_keys_and_bad_syntax_are_syntax_errors() {
        for text in ["a: 1\na: 2\n", "a: [1, 2\n"] {
            assert!(
                serde_yaml_ng::from_str::<Value>(text).is_err(),
                "the library refuses {text:?}"
            );
            assert!(matches!(parse(text), Err(ReadError::Syntax(_))), "{text:?}");
        }
    }
}
