//! How GET renders a stored configuration value: integers and booleans of the LXC schema
//! (`api_schema::lxc::CONFIG`, pve-container `$confdesc`) and of QEMU's as JSON numbers, the rest
//! (`number` keys such as `cpulimit` too) as strings; and cgroup v2's clamp of `cpuunits`.
//! Values are checked by `api_schema`.

use serde_json::Value;

use super::api_schema::{Ty, lxc};

/// Renders a stored value for GET: integers and booleans as numbers, the rest as strings.
pub(crate) fn typed(key: &str, value: &str) -> Value {
    let numeric = lxc::config_prop(key).is_some_and(|p| matches!(p.ty, Ty::Bool | Ty::Int))
        || qemu_int_key(key);
    if numeric {
        value
            .parse::<i64>()
            .map_or_else(|_| Value::from(value), Value::from)
    } else {
        Value::from(value)
    }
}

fn qemu_int_key(key: &str) -> bool {
    matches!(
        key,
        "cores"
            | "sockets"
            | "vcpus"
            | "memory"
            | "balloon"
            | "shares"
            | "cpuunits"
            | "onboot"
            | "protection"
            | "numa"
            | "template"
            | "kvm"
            | "acpi"
            | "agent_enabled"
    )
}

/// `PVE::CGroup::clamp_cpu_shares` on cgroup v2.
pub(crate) fn clamp_cpuunits(value: &str) -> String {
    match value.parse::<u64>() {
        Ok(n) => n.clamp(1, 10_000).to_string(),
        Err(_) => value.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_and_booleans_render_as_numbers() {
        assert_eq!(typed("memory", "512"), Value::from(512));
        assert_eq!(typed("onboot", "1"), Value::from(1));
        assert_eq!(typed("cpulimit", "1.5"), Value::from("1.5"));
        assert_eq!(typed("hostname", "web"), Value::from("web"));
    }

    #[test]
    fn cpuunits_are_clamped_for_cgroup_v2() {
        assert_eq!(clamp_cpuunits("0"), "1");
        assert_eq!(clamp_cpuunits("500000"), "10000");
    }
}
