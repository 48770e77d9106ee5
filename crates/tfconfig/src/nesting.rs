//! A guard in front of the HCL parser: brackets nested too deep are refused before parsing.
//!
//! hcl-edit's parser backtracks: when an expression with `[` indexes and `(` groups fails to
//! parse deep inside, it retries each level another way, so the time doubles with every level
//! (measured: 16 levels 0.7 s, 20 levels 10 s, for a 400-byte input the fuzzer found). A valid
//! expression parses in linear time however deep, but a pull request chooses its errors, so the
//! depth is bounded for everything the parser reads. Real configurations nest a few levels; the
//! limit leaves room for far more.

/// Deepest nesting of `[` and `(` accepted (comments are skipped; `{` is not counted, since
/// blocks nest without the retrying).
pub(crate) const MAX_NESTING: usize = 12;

/// Where the nesting first goes past [`MAX_NESTING`]: a byte offset into the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooDeep {
    pub(crate) offset: usize,
}

impl TooDeep {
    /// The diagnostic's detail.
    pub(crate) fn detail(&self) -> String {
        format!(
            "Brackets (`[`, `(`) are nested more than {MAX_NESTING} deep here. atoll refuses \
             deeper nesting, which its HCL parser cannot read in bounded time when the \
             expression has an error; move the inner part into a local value."
        )
    }
}

/// The same refusal as a diagnostic on `file` (`summary` names what was being read).
pub(crate) fn diagnostic(summary: &str, file: usize, deep: TooDeep) -> crate::diag::Diagnostic {
    crate::diag::Diagnostic::error(
        summary,
        deep.detail(),
        Some(crate::diag::Span {
            file,
            range: deep.offset..deep.offset + 1,
        }),
    )
}

/// `Ok` when `text` nests `[` and `(` at most [`MAX_NESTING`] deep outside comments.
pub(crate) fn check(text: &str) -> Result<(), TooDeep> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'#' => i = line_end(bytes, i),
            b'/' if bytes.get(i + 1) == Some(&b'/') => i = line_end(bytes, i),
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = find(bytes, i + 2, b"*/").map_or(bytes.len(), |end| end + 2);
            }
            b'[' | b'(' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(TooDeep { offset: i });
                }
                i += 1;
            }
            b']' | b')' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ => i += 1,
        }
    }
    Ok(())
}

fn line_end(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|b| *b == b'\n')
        .map_or(bytes.len(), |p| from + p)
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_up_to_the_limit_passes_and_one_more_is_refused_where_it_starts() {
        let at = |d: usize| format!("x = {}1{}", "[".repeat(d), "]".repeat(d));
        assert_eq!(check(&at(MAX_NESTING)), Ok(()));
        let deeper = at(MAX_NESTING + 1);
        assert_eq!(
            check(&deeper),
            Err(TooDeep {
                offset: 4 + MAX_NESTING
            })
        );
        // Closed brackets do not add up; comments do not count.
        let wide = "f([1], [2], (3), [[4]])\n".repeat(100);
        assert_eq!(check(&wide), Ok(()));
        let commented = format!(
            "# {}\n// {}\n/* {} */ x = 1",
            "[".repeat(50),
            "(".repeat(50),
            "[".repeat(50)
        );
        assert_eq!(check(&commented), Ok(()));
    }
}
