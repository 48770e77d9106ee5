//! What pve-network returns for SDN objects, in the form atoll writes it: a subnet's
//! `dhcp-range` comes back as a list of `{start-address, end-address}` objects and is compared
//! as the property string atoll sends (`start-address=..,end-address=..`).

use std::collections::BTreeMap;

use serde_json::Value as Json;

/// A subnet's `dhcp-range`, as atoll writes it.
pub(super) fn subnet_fields(value: &Json, fields: &mut BTreeMap<String, String>) {
    let Some(ranges) = value.get("dhcp-range").and_then(Json::as_array) else {
        return;
    };
    let text: Vec<String> = ranges
        .iter()
        .filter_map(|r| {
            let start = r.get("start-address")?.as_str()?;
            let end = r.get("end-address")?.as_str()?;
            Some(format!("start-address={start},end-address={end}"))
        })
        .collect();
    if !text.is_empty() {
        fields.insert("dhcp-range".to_owned(), text.join(","));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subnets_ranges_read_back_as_atoll_writes_them() {
        let value = serde_json::json!({
            "dhcp-range": [{"start-address": "10.0.0.10", "end-address": "10.0.0.20"}]
        });
        let mut fields = BTreeMap::new();
        subnet_fields(&value, &mut fields);
        assert_eq!(
            fields["dhcp-range"],
            "start-address=10.0.0.10,end-address=10.0.0.20"
        );
    }
}
