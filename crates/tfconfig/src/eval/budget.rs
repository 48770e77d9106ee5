//! The evaluation budget of one load: value nodes (work) and bytes (memory), both spent as
//! values are made, never given back. Bytes are an estimate of what a value occupies (its
//! nodes, string bytes and map keys), so the sum of everything made bounds the evaluator's
//! peak memory from above. Functions that can make much more than they are given (`formatlist`,
//! `range`, `join`, templates, ...) check [`Budget::room`] before building their result.

use std::cell::Cell;

use crate::checkout::size;
use crate::value::Value;

/// Bytes one value node occupies, before its string or key bytes.
pub const NODE_BYTES: u64 = std::mem::size_of::<Value>() as u64;
/// Bytes one map or object entry adds besides its key's text and its value (the key's
/// `String` and the tree's share).
pub const ENTRY_BYTES: u64 = 32;

/// Values and bytes left to one load.
#[derive(Debug)]
pub struct Budget {
    values: Cell<u64>,
    bytes: Cell<u64>,
    bytes_limit: u64,
}

/// Which part of the budget ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spent {
    Values,
    Bytes,
}

impl Budget {
    pub fn new(values: u64, bytes: u64) -> Self {
        Budget {
            values: Cell::new(values),
            bytes: Cell::new(bytes),
            bytes_limit: bytes,
        }
    }

    /// Value nodes left.
    pub fn values_left(&self) -> u64 {
        self.values.get()
    }

    /// Bytes left: the most a function may make before the budget is spent.
    pub fn room(&self) -> u64 {
        self.bytes.get()
    }

    /// Spends `values` nodes and `bytes` bytes; once either runs out, every later charge fails.
    pub fn charge(&self, values: u64, bytes: u64) -> Result<(), Spent> {
        let (v, b) = (self.values.get(), self.bytes.get());
        if values > v {
            self.values.set(0);
            return Err(Spent::Values);
        }
        if bytes > b {
            self.bytes.set(0);
            return Err(Spent::Bytes);
        }
        self.values.set(v - values);
        self.bytes.set(b - bytes);
        Ok(())
    }

    /// The detail of the "Evaluation limit reached" diagnostic.
    pub fn explain(&self, spent: Spent) -> String {
        match spent {
            Spent::Values => {
                "This configuration produces more values than atoll evaluates in one load \
                 (a huge range(), for_each, count or a value that doubles at every step). \
                 Reduce the size of the collections involved."
                    .to_owned()
            }
            Spent::Bytes => format!(
                "This configuration needs more than {} of memory for its values, the most atoll \
                 evaluates in one load (server setting limits.eval_memory_mb). Long strings and \
                 large collections count, including what functions such as formatlist, format, \
                 join, range and string templates build. Reduce their size.",
                size(self.bytes_limit)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spent_budget_refuses_every_later_charge() {
        let b = Budget::new(10, 1000);
        assert_eq!(b.charge(5, 500), Ok(()));
        assert_eq!(b.charge(1, 501), Err(Spent::Bytes));
        assert_eq!(b.charge(0, 1), Err(Spent::Bytes));
        assert_eq!(b.values_left(), 5);
        assert_eq!(b.charge(6, 0), Err(Spent::Values));
    }
}
