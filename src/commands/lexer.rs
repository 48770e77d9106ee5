//! A small shell-style tokenizer for one comment line. It only splits words: no expansion, no
//! substitution, nothing is ever handed to a shell.
//!
//! Rules (a subset of POSIX shell word splitting, like Go's `shlex` that Atlantis uses):
//! - whitespace separates words;
//! - `'...'` is literal;
//! - `"..."` is literal except that `\"` and `\\` are unescaped;
//! - outside quotes, `\x` is the character `x`;
//! - `''` and `""` make an empty word.

/// Why a line could not be split into words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LexError {
    UnterminatedSingle,
    UnterminatedDouble,
    TrailingBackslash,
}

impl LexError {
    pub(crate) fn message(self) -> &'static str {
        match self {
            Self::UnterminatedSingle => "a single quote (') is not closed; close it or remove it",
            Self::UnterminatedDouble => "a double quote (\") is not closed; close it or remove it",
            Self::TrailingBackslash => "the comment ends with a backslash (\\); remove it",
        }
    }
}

/// Splits `line` into words. As in a shell, quoting does not change what a word means: `'-d'`
/// is the flag `-d`.
pub(crate) fn tokenize(line: &str) -> Result<Vec<String>, LexError> {
    let mut tokens = Vec::new();
    let mut chars = line.chars();
    let mut current: Option<String> = None;
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            tokens.extend(current.take());
            continue;
        }
        let token = current.get_or_insert_with(String::new);
        match c {
            '\'' => read_single(&mut chars, token)?,
            '"' => read_double(&mut chars, token)?,
            '\\' => token.push(chars.next().ok_or(LexError::TrailingBackslash)?),
            _ => token.push(c),
        }
    }
    tokens.extend(current);
    Ok(tokens)
}

fn read_single(chars: &mut std::str::Chars<'_>, out: &mut String) -> Result<(), LexError> {
    for c in chars.by_ref() {
        if c == '\'' {
            return Ok(());
        }
        out.push(c);
    }
    Err(LexError::UnterminatedSingle)
}

fn read_double(chars: &mut std::str::Chars<'_>, out: &mut String) -> Result<(), LexError> {
    while let Some(c) = chars.next() {
        match c {
            '"' => return Ok(()),
            '\\' => match chars.next() {
                Some(next @ ('"' | '\\')) => out.push(next),
                Some(next) => {
                    out.push('\\');
                    out.push(next);
                }
                None => return Err(LexError::UnterminatedDouble),
            },
            _ => out.push(c),
        }
    }
    Err(LexError::UnterminatedDouble)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        tokenize(line).expect("valid line")
    }

    #[test]
    fn splits_on_whitespace_and_honours_quotes() {
        assert_eq!(words("plan  -d\tenvs/dev"), ["plan", "-d", "envs/dev"]);
        assert_eq!(words("plan -d 'my dir'"), ["plan", "-d", "my dir"]);
        assert_eq!(
            words(r#"plan -d "a \"b\" c""#),
            ["plan", "-d", r#"a "b" c"#]
        );
        assert_eq!(words(r"plan -d a\ b"), ["plan", "-d", "a b"]);
        assert_eq!(words(r#"-d "a\nb""#), ["-d", r"a\nb"]);
        assert_eq!(words("x '' y"), ["x", "", "y"]);
        assert_eq!(words("a'b'\"c\"d"), ["abcd"]);
    }

    #[test]
    fn unterminated_quotes_and_trailing_backslash_are_errors() {
        assert_eq!(tokenize("plan -d 'x"), Err(LexError::UnterminatedSingle));
        assert_eq!(tokenize("plan -d \"x"), Err(LexError::UnterminatedDouble));
        assert_eq!(tokenize("plan -d \"x\\"), Err(LexError::UnterminatedDouble));
        assert_eq!(tokenize("plan \\"), Err(LexError::TrailingBackslash));
    }
}
