//! Network functions: `cidrhost cidrsubnet cidrsubnets cidrnetmask` for IPv4 and IPv6.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::{FnError, FnResult, int_arg, str_arg};
use crate::value::{Type, Value};

pub(super) fn call(name: &str, args: &[Value]) -> Option<FnResult> {
    let r = match name {
        "cidrhost" => cidrhost(args),
        "cidrsubnet" => cidrsubnet(args),
        "cidrsubnets" => cidrsubnets(args),
        "cidrnetmask" => cidrnetmask(args),
        _ => return None,
    };
    Some(r)
}

/// A parsed prefix: address as u128, address width (32 or 128) and prefix length.
struct Prefix {
    addr: u128,
    bits: u32,
    len: u32,
}

fn parse(args: &[Value], i: usize) -> Result<Prefix, FnError> {
    let s = str_arg(args, i)?;
    // Terraform's words; a call error, not an argument error (but for cidrsubnets).
    let bad = || {
        FnError::Call(format!(
            "invalid CIDR expression: invalid CIDR address: {s}"
        ))
    };
    let (a, l) = s.split_once('/').ok_or_else(bad)?;
    let ip: IpAddr = match legacy_v4(a) {
        Some(v4) => IpAddr::V4(v4),
        None => a.parse().map_err(|_| bad())?,
    };
    let mut len: u32 = l.parse().map_err(|_| bad())?;
    let (addr, bits) = match ip {
        IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32),
        // An IPv4-mapped address is an IPv4 one (Go's net package), its prefix 96 bits less.
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) if (96..=128).contains(&len) => {
                len -= 96;
                (u128::from(u32::from(v4)), 32)
            }
            _ => (u128::from(v6), 128),
        },
    };
    if len > bits {
        return Err(bad());
    }
    let host_bits = bits - len;
    let mask = if host_bits >= 128 {
        0
    } else {
        !((1u128 << host_bits) - 1)
    };
    Ok(Prefix {
        addr: addr & mask & width_mask(bits),
        bits,
        len,
    })
}

/// An IPv4 address as Terraform's (Go 1.16's) parser reads it: four decimal parts, leading
/// zeros allowed and still decimal (`010.001.0.0` is 10.1.0.0).
fn legacy_v4(a: &str) -> Option<Ipv4Addr> {
    let parts: Vec<u8> = a
        .split('.')
        .map(|p| {
            let digits = !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit());
            digits.then(|| p.parse::<u8>().ok()).flatten()
        })
        .collect::<Option<_>>()?;
    let [a, b, c, d] = parts[..] else {
        return None;
    };
    Some(Ipv4Addr::new(a, b, c, d))
}

fn width_mask(bits: u32) -> u128 {
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

fn show(addr: u128, bits: u32) -> String {
    if bits == 32 {
        Ipv4Addr::from(addr as u32).to_string()
    } else {
        Ipv6Addr::from(addr).to_string()
    }
}

fn cidrhost(args: &[Value]) -> FnResult {
    let p = parse(args, 0)?;
    let n = int_arg(args, 1)?;
    let host_bits = p.bits - p.len;
    let size: u128 = if host_bits >= 128 {
        u128::MAX
    } else {
        1u128 << host_bits
    };
    let off: u128 = if n >= 0 {
        n as u128
    } else {
        size.checked_sub(n.unsigned_abs() as u128).ok_or_else(|| {
            FnError::Call(format!(
                "prefix of {} does not accommodate a host numbered {n}",
                p.len
            ))
        })?
    };
    if off >= size {
        return Err(FnError::Call(format!(
            "prefix of {} does not accommodate a host numbered {n}",
            p.len
        )));
    }
    Ok(Value::String(show(p.addr + off, p.bits)))
}

fn subnet(p: &Prefix, newbits: i64, num: i64) -> Result<String, FnError> {
    if newbits < 0 || p.len + newbits as u32 > p.bits {
        return Err(FnError::Call(format!(
            "insufficient address space to extend prefix of {} by {newbits}",
            p.len
        )));
    }
    let nl = p.len + newbits as u32;
    if num < 0 || (newbits < 127 && (num as u128) >= (1u128 << newbits)) {
        return Err(FnError::Call(format!(
            "prefix extension of {newbits} does not accommodate a subnet numbered {num}"
        )));
    }
    let shift = p.bits - nl;
    let addr = if shift >= 128 {
        p.addr
    } else {
        p.addr | ((num as u128) << shift)
    };
    Ok(format!("{}/{nl}", show(addr, p.bits)))
}

fn cidrsubnet(args: &[Value]) -> FnResult {
    let p = parse(args, 0)?;
    subnet(&p, int_arg(args, 1)?, int_arg(args, 2)?).map(Value::String)
}

fn cidrsubnets(args: &[Value]) -> FnResult {
    let p = parse(args, 0).map_err(|e| match e {
        FnError::Call(msg) => FnError::Arg(0, msg),
        other => other,
    })?;
    let mut out = Vec::new();
    let mut next: u128 = p.addr;
    for i in 1..args.len() {
        let nb = int_arg(args, i)?;
        if nb > 32 {
            return Err(FnError::Arg(
                i,
                "may not extend prefix by more than 32 bits".into(),
            ));
        }
        if nb < 1 || p.len + nb as u32 > p.bits {
            return Err(FnError::Arg(
                i,
                format!(
                    "would extend prefix to {} bits, which is too long for an IPv{} address",
                    p.len as i64 + nb,
                    if p.bits == 32 { 4 } else { 6 }
                ),
            ));
        }
        let nl = p.len + nb as u32;
        let step: u128 = 1u128 << (p.bits - nl);
        // align up to the subnet size
        let no_space = || {
            FnError::Arg(
                i,
                "not enough remaining address space for a subnet with a prefix of this length"
                    .into(),
            )
        };
        let aligned = next.div_ceil(step).checked_mul(step).ok_or_else(no_space)?;
        let host_bits = p.bits - p.len;
        let parent_size_minus_one = if host_bits >= 128 {
            u128::MAX
        } else {
            (1u128 << host_bits) - 1
        };
        let end_of_parent = p.addr.saturating_add(parent_size_minus_one);
        let last = aligned.checked_add(step - 1).ok_or_else(no_space)?;
        if last > end_of_parent {
            return Err(no_space());
        }
        out.push(Value::String(format!("{}/{nl}", show(aligned, p.bits))));
        next = last.saturating_add(1);
    }
    Ok(Value::List(Type::String, out))
}

fn cidrnetmask(args: &[Value]) -> FnResult {
    let p = parse(args, 0)?;
    if p.bits != 32 {
        return Err(FnError::Arg(0, "only IPv4 networks are supported".into()));
    }
    let mask = if p.len == 0 {
        0
    } else {
        u32::MAX << (32 - p.len)
    };
    Ok(Value::String(Ipv4Addr::from(mask).to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Value {
        Value::string(v)
    }

    #[test]
    fn cidrhost_counts_from_start_and_end() {
        assert_eq!(
            cidrhost(&[s("10.12.112.0/20"), Value::Number(16.0)]).ok(),
            Some(s("10.12.112.16"))
        );
        assert_eq!(
            cidrhost(&[s("10.12.112.0/20"), Value::Number(-2.0)]).ok(),
            Some(s("10.12.127.254"))
        );
        assert!(cidrhost(&[s("10.0.0.0/30"), Value::Number(4.0)]).is_err());
    }

    #[test]
    fn cidrsubnet_and_cidrsubnets_follow_terraform() {
        assert_eq!(
            cidrsubnet(&[s("172.16.0.0/12"), Value::Number(4.0), Value::Number(2.0)]).ok(),
            Some(s("172.18.0.0/16"))
        );
        let v = cidrsubnets(&[
            s("10.1.0.0/16"),
            Value::Number(4.0),
            Value::Number(4.0),
            Value::Number(8.0),
            Value::Number(4.0),
        ])
        .ok();
        assert_eq!(
            v.map(|v| v.to_string()).as_deref(),
            Some(r#"["10.1.0.0/20", "10.1.16.0/20", "10.1.32.0/24", "10.1.48.0/20"]"#)
        );
        assert_eq!(
            cidrnetmask(&[s("10.0.0.0/12")]).ok(),
            Some(s("255.240.0.0"))
        );
    }
}
