//! A guard in front of the HCL parser: brackets nested too deep are refused before parsing.
//!
//! hcl-edit's parser backtracks: when an expression with `[` indexes and `(` groups fails to
//! parse deep inside, it retries each level another way, so the time doubles with every level
//! (measured: 16 levels 0.7 s, 20 levels 10 s, for a 400-byte input the fuzzer found). A valid
//! expression parses in linear time however deep, but a pull request chooses its errors, so the
//! depth is bounded for everything the parser reads. Real configurations nest a few levels; the
//! limit leaves room for far more.

/// Deepest nesting of expression brackets accepted: `[`, `(`, and `{` that opens an object or a
/// template (`${`, `%{`). A block's `{` (`resource "a" "b" {`) does not count: bodies nest
/// without the retrying. Comments are skipped.
pub(crate) const MAX_NESTING: usize = 14;

/// Where the nesting first goes past [`MAX_NESTING`]: a byte offset into the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooDeep {
    pub(crate) offset: usize,
}

impl TooDeep {
    /// The diagnostic's detail.
    pub(crate) fn detail(&self) -> String {
        format!(
            "Brackets (`[`, `(`, `{{`) are nested more than {MAX_NESTING} deep in this \
             expression. atoll refuses deeper nesting, which its HCL parser cannot read in \
             bounded time when the expression has an error; move the inner part into a local \
             value."
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

/// What an open bracket is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    /// A block's body: what is inside is at body level again.
    Block,
    /// Part of an expression: counts towards the depth.
    Expression,
}

/// `Ok` when no expression in `text` nests brackets more than [`MAX_NESTING`] deep.
pub(crate) fn check(text: &str) -> Result<(), TooDeep> {
    let bytes = text.as_bytes();
    let mut open: Vec<Open> = Vec::new();
    let mut depth = 0usize;
    // Where the current line's content starts, for telling a block header from an expression.
    let mut line_start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'#' => i = line_end(bytes, i),
            b'/' if bytes.get(i + 1) == Some(&b'/') => i = line_end(bytes, i),
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = find(bytes, i + 2, b"*/").map_or(bytes.len(), |end| end + 2);
            }
            b'\n' => {
                line_start = i + 1;
                i += 1;
            }
            byte @ (b'[' | b'(' | b'{') => {
                let at_body_level = open.last().is_none_or(|o| *o == Open::Block);
                let kind =
                    if byte == b'{' && at_body_level && is_block_header(&bytes[line_start..i]) {
                        Open::Block
                    } else {
                        depth += 1;
                        if depth > MAX_NESTING {
                            return Err(TooDeep { offset: i });
                        }
                        Open::Expression
                    };
                if kind == Open::Block {
                    line_start = i + 1;
                }
                open.push(kind);
                i += 1;
            }
            b']' | b')' | b'}' => {
                if open.pop() == Some(Open::Expression) {
                    depth -= 1;
                }
                if open.last().is_none_or(|o| *o == Open::Block) {
                    line_start = i + 1;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    Ok(())
}

/// Whether the text before a `{` on its line is a block header: a type and labels
/// (identifiers and quoted strings), nothing an expression would contain.
fn is_block_header(before: &[u8]) -> bool {
    let mut saw_word = false;
    for byte in before {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'-' | b'"' | b'.' => saw_word = true,
            b' ' | b'\t' | b'\r' => {}
            _ => return false,
        }
    }
    saw_word
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
        // Closed brackets do not add up; comments do not count; blocks do not count.
        let wide = "f([1], [2], (3), [[4]])\n".repeat(100);
        assert_eq!(check(&wide), Ok(()));
        let commented = format!(
            "# {}\n// {}\n/* {} */ x = 1",
            "[".repeat(50),
            "(".repeat(50),
            "[".repeat(50)
        );
        assert_eq!(check(&commented), Ok(()));
        let blocks = format!(
            "{}x = 1\n{}",
            "block \"a\" {\n".repeat(40),
            "}\n".repeat(40)
        );
        assert_eq!(check(&blocks), Ok(()));
    }

    #[test]
    fn objects_and_templates_count_as_expression_nesting_inside_blocks() {
        let object = |d: usize| {
            format!(
                "{}x = {}1{}\n{}",
                "a {\n".repeat(5),
                "{ k = ".repeat(d),
                " }".repeat(d),
                "}\n".repeat(5)
            )
        };
        assert_eq!(check(&object(MAX_NESTING)), Ok(()));
        assert!(check(&object(MAX_NESTING + 1)).is_err());
        // The fuzzer's input: objects after an operator, never closed.
        let fuzzed = format!("1{}", "%{-3-e ".repeat(MAX_NESTING + 1));
        assert!(check(&fuzzed).is_err());
        let template = format!("x = \"{}\"", "${[".repeat(MAX_NESTING / 2 + 1));
        assert!(check(&template).is_err());
        // A block written on one line with its body is still a block.
        let one_line = "a { b { c { d { e { f { g { h { i { j { k { l { m { n { o = [[1]] } } } } } } } } } } } } } } }";
        assert_eq!(check(one_line), Ok(()));
    }
}
