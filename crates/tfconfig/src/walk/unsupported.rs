//! Resource and data source types atoll cannot evaluate, found in every module the project
//! loads, whether or not the block (or its module call) has any instance: one diagnostic per
//! type, on its first block, naming every place it is written, what atoll supports instead
//! and what to do. The walker then leaves such blocks unknown without a word of its own.

use std::collections::BTreeMap;

use super::super::config::Resource;
use super::super::diag::{Diagnostic, SourceMap};
use super::super::load::ModuleTree;
use super::super::schema;

/// At most this many places are named; the rest are counted.
const MAX_PLACES: usize = 5;

/// Whether atoll evaluates blocks of `r`'s type.
pub(super) fn supported(r: &Resource) -> bool {
    if r.data {
        schema::data_source(&r.rtype).is_some() || schema::local_data_source(&r.rtype).is_some()
    } else {
        schema::resource(&r.rtype).is_some()
    }
}

/// One diagnostic per unsupported type in `tree` and every module below it.
pub(crate) fn diagnose(tree: &ModuleTree, sources: &SourceMap) -> Vec<Diagnostic> {
    let mut found: Vec<&Resource> = Vec::new();
    collect(tree, &mut found);
    let mut by_type: BTreeMap<(bool, &str), Vec<&Resource>> = BTreeMap::new();
    let mut order: Vec<(bool, &str)> = Vec::new();
    for r in found {
        let key = (r.data, r.rtype.as_str());
        let blocks = by_type.entry(key).or_default();
        if blocks.is_empty() {
            order.push(key);
        }
        // A module called twice from one place is loaded once; a block is named once.
        if !blocks.iter().any(|b| b.span == r.span) {
            blocks.push(r);
        }
    }
    order
        .into_iter()
        .filter_map(|key| by_type.get(&key))
        .map(|blocks| diagnostic(blocks, sources))
        .collect()
}

fn collect<'t>(tree: &'t ModuleTree, found: &mut Vec<&'t Resource>) {
    found.extend(tree.config.resources.iter().filter(|r| !supported(r)));
    for child in tree.children.values() {
        collect(child, found);
    }
}

fn diagnostic(blocks: &[&Resource], sources: &SourceMap) -> Diagnostic {
    let first = blocks[0];
    let what = if first.data {
        "Data source"
    } else {
        "Resource type"
    };
    let places = places(blocks, sources);
    let detail = match schema::never(&first.rtype, first.data) {
        Some(why) => format!(
            "{what} \"{}\" is refused: {why}. It is used {places}.",
            first.rtype
        ),
        None => {
            let provider = first.rtype.split('_').next().unwrap_or_default();
            let (verb, listed) = if first.data {
                ("reads only these data sources", schema::DATA_SOURCES)
            } else {
                ("manages only these resource types", schema::SUPPORTED)
            };
            let why = if provider == "proxmox" {
                "is a bpg/proxmox type atoll's Proxmox engine does not evaluate yet".to_owned()
            } else {
                format!(
                    "comes from provider \"{provider}\", which atoll's Proxmox engine does not \
                     evaluate: it evaluates only the bpg/proxmox provider and the utility \
                     providers random, tls, time, null, local and terraform"
                )
            };
            let blocks = if blocks.len() == 1 {
                "the block"
            } else {
                "those blocks"
            };
            format!(
                "{what} \"{}\" {why}. atoll {verb}: {}. It is used {places}. Remove {blocks} \
                 from this project, or move {them} to a separate project that atoll does not plan \
                 (exclude its directory in the server's repo rules) and apply that one with \
                 Terraform yourself.",
                first.rtype,
                listed.join(", "),
                them = if blocks == "the block" { "it" } else { "them" },
            )
        }
    };
    Diagnostic::error(
        format!("Unsupported {}", what.to_lowercase()),
        detail,
        Some(first.type_span.clone()),
    )
}

/// `in main.tf:3` or `in 3 blocks: main.tf:3, modules/db/main.tf:7, ...`.
fn places(blocks: &[&Resource], sources: &SourceMap) -> String {
    let mut named: Vec<String> = blocks
        .iter()
        .take(MAX_PLACES)
        .map(|r| match sources.locate(&r.span) {
            Some((file, line, _)) => format!("{file}:{line}"),
            None => format!("{}.{}", r.rtype, r.name),
        })
        .collect();
    if blocks.len() > MAX_PLACES {
        named.push(format!("and {} more", blocks.len() - MAX_PLACES));
    }
    match blocks.len() {
        1 => format!("in {}", named.join("")),
        n => format!("in {n} blocks: {}", named.join(", ")),
    }
}

#[cfg(test)]
#[path = "unsupported_tests.rs"]
mod tests;
