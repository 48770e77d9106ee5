//! `startup` (`[[order=]N][,up=N][,down=N]`), parsed like `pve_parse_startup_order` and printed
//! like `pve_print_startup_order` (order, up, down).

use std::fmt;
use std::str::FromStr;

use super::PropertyError;

/// Start/stop ordering of a guest at node boot and shutdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Startup {
    pub order: Option<u64>,
    /// Seconds to wait after this guest started before starting the next.
    pub up: Option<u64>,
    /// Seconds to wait after this guest stopped before stopping the next.
    pub down: Option<u64>,
}

impl FromStr for Startup {
    type Err = PropertyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |part: &str| {
            PropertyError::new(
                "startup",
                format!("'{part}' is not order=N, up=N or down=N"),
            )
        };
        let number = |part: &str, v: &str| -> Result<u64, PropertyError> {
            if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad(part));
            }
            v.parse().map_err(|_| bad(part))
        };
        let mut out = Self::default();
        for part in s.split(',').filter(|p| !p.trim().is_empty()) {
            let (slot, v) = match part.split_once('=') {
                None => (&mut out.order, part),
                Some(("order", v)) => (&mut out.order, v),
                Some(("up", v)) => (&mut out.up, v),
                Some(("down", v)) => (&mut out.down, v),
                Some(_) => return Err(bad(part)),
            };
            // PVE lets a later value win; atoll refuses the ambiguity instead.
            if slot.replace(number(part, v)?).is_some() {
                return Err(PropertyError::new(
                    "startup",
                    format!("'{part}' repeats a key"),
                ));
            }
        }
        if out == Self::default() {
            return Err(PropertyError::new(
                "startup",
                "empty value; delete the key instead",
            ));
        }
        Ok(out)
    }
}

impl fmt::Display for Startup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts = [("order", self.order), ("up", self.up), ("down", self.down)];
        let text: Vec<String> = parts
            .iter()
            .filter_map(|(k, v)| v.map(|v| format!("{k}={v}")))
            .collect();
        f.write_str(&text.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn startup_prints_order_up_down() {
        let s: Startup = "down=60,3,up=30".parse().expect("test value");
        assert_eq!(
            s,
            Startup {
                order: Some(3),
                up: Some(30),
                down: Some(60)
            }
        );
        assert_eq!(s.to_string(), "order=3,up=30,down=60");
        assert_eq!(
            "order=3,up=60,down=60"
                .parse::<Startup>()
                .expect("test value")
                .to_string(),
            "order=3,up=60,down=60"
        );
    }

    #[test]
    fn startup_rejects_junk() {
        for bad in ["", "order=x", "up=-1", "late=5", "3,order=4", "up="] {
            assert!(bad.parse::<Startup>().is_err(), "{bad}");
        }
    }
}
