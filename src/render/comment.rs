//! Markdown comment building blocks: escaping user-controlled text, folding long output into
//! `<details>`, and splitting a body at a forge's size limit with code fences closed and
//! reopened across parts.

/// Output longer than this many lines folds into `<details>`.
pub const FOLD_ABOVE_LINES: usize = 12;

/// User-controlled text (branch names, resource names, error text) made inert for Markdown:
/// Markdown punctuation and HTML are backslash-escaped or entity-encoded, `@` cannot mention
/// anyone (a zero-width joiner follows it) and control characters become spaces.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '@' => out.push_str("@\u{200B}"),
            '\\' | '`' | '*' | '_' | '{' | '}' | '[' | ']' | '(' | ')' | '#' | '+' | '!' | '|'
            | '~' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text to show inside a fenced code block: a run of backticks could end the fence early, so
/// consecutive backticks get a zero-width space between them (a single backtick, as in a quoted
/// `atoll apply`, stays as it is and copies cleanly); `@` cannot mention anyone.
pub fn code_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut previous = None;
    for c in text.chars() {
        if c == '`' && previous == Some('`') {
            out.push('\u{200B}');
        }
        out.push(c);
        if c == '@' {
            out.push('\u{200B}');
        }
        previous = Some(c);
    }
    out
}

/// A fenced code block of `text` (already passed through [`code_text`] by the caller or
/// here), folded into `<details>` with `summary` when it has more than
/// [`FOLD_ABOVE_LINES`] lines.
pub fn code_block(lang: &str, text: &str, summary: &str) -> String {
    let body = code_text(text.trim_end_matches('\n'));
    let fenced = format!("```{lang}\n{body}\n```\n");
    if body.lines().count() > FOLD_ABOVE_LINES {
        format!(
            "<details><summary>{}</summary>\n\n{fenced}</details>\n",
            escape(summary)
        )
    } else {
        fenced
    }
}

/// Splits `body` into parts of at most `max` characters each. Splits fall on line ends where
/// possible; a code fence open at a split is closed at the end of the part and reopened
/// (with its language) at the start of the next, and an open `<details>` is closed and
/// reopened the same way, so every part renders on its own. Parts after the first start with
/// "(continued, part N of M)".
pub fn split(body: &str, max: usize) -> Vec<String> {
    numbered(split_unnumbered(body, max))
}

/// A body split for posting, cut to a number of comments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capped {
    /// The comments to post, numbered among themselves.
    pub parts: Vec<String>,
    /// How many comments the whole body would have taken at the forge's limit.
    pub total: usize,
    /// The text of the parts left out (empty when nothing was cut).
    pub omitted: String,
    /// The part after which the omitted text was (where a note belongs).
    pub cut_after: usize,
}

impl Capped {
    /// Whether parts were left out.
    pub fn truncated(&self) -> bool {
        self.total > self.parts.len()
    }
}

/// Like [`split`], but at most `max_parts` comments (at least one). When the body needs more,
/// the first `max_parts - 1` parts and the last one are kept (a reply's end says what to do
/// next) and the middle is left out; the kept parts are split `reserve` characters short of
/// `max`, so that a note of that length can follow part `cut_after` (each part is balanced, so
/// the note lands outside any fence).
pub fn split_capped(body: &str, max: usize, max_parts: usize, reserve: usize) -> Capped {
    let max_parts = max_parts.max(1);
    let whole = split_unnumbered(body, max);
    let total = whole.len();
    if total <= max_parts {
        return Capped {
            cut_after: total.saturating_sub(1),
            parts: numbered(whole),
            total,
            omitted: String::new(),
        };
    }
    drop(whole);
    let mut parts = split_unnumbered(body, max.saturating_sub(reserve));
    let head = max_parts.saturating_sub(1).max(1).min(parts.len());
    let keep_last = max_parts > 1 && parts.len() > head;
    let tail = if keep_last { parts.pop() } else { None };
    let omitted = parts.split_off(head).concat();
    parts.extend(tail);
    Capped {
        parts: numbered(parts),
        total,
        omitted,
        cut_after: head - 1,
    }
}

/// The parts of `body`, each balanced, without continuation headers.
fn split_unnumbered(body: &str, max: usize) -> Vec<String> {
    // Room for the continuation header and the closing/reopening of a fence and details.
    const RESERVE: usize = 200;
    if body.chars().count() <= max {
        return vec![body.to_owned()];
    }
    let budget = max.saturating_sub(RESERVE).max(64);
    let mut parts: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut current_len = 0usize;
    let mut fence: Option<String> = None;
    let mut details = false;
    for line in lines_within(body, budget) {
        let len = line.chars().count();
        if current_len + len > budget && current_len > 0 {
            let (close, reopen) = closers(fence.as_deref(), details);
            current.push_str(&close);
            parts.push(std::mem::take(&mut current));
            current.push_str(&reopen);
            current_len = reopen.chars().count();
        }
        track(&line, &mut fence, &mut details);
        current_len += len;
        current.push_str(&line);
    }
    if !current.is_empty() {
        parts.push(current);
    }
    parts
}

/// Parts after the first get "(continued, part N of M)".
fn numbered(parts: Vec<String>) -> Vec<String> {
    let total = parts.len();
    parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            if i == 0 {
                p
            } else {
                format!("(continued, part {} of {total})\n\n{p}", i + 1)
            }
        })
        .collect()
}

/// The lines of `body` with their newlines, any line longer than `budget` cut into pieces.
fn lines_within(body: &str, budget: usize) -> Vec<String> {
    let mut out = Vec::new();
    for line in body.split_inclusive('\n') {
        let mut rest = line;
        while rest.chars().count() > budget {
            let cut = rest
                .char_indices()
                .nth(budget)
                .map_or(rest.len(), |(at, _)| at);
            let (piece, tail) = rest.split_at(cut);
            out.push(format!("{piece}\n"));
            rest = tail;
        }
        if !rest.is_empty() {
            out.push(rest.to_owned());
        }
    }
    out
}

fn track(line: &str, fence: &mut Option<String>, details: &mut bool) {
    let trimmed = line.trim();
    if let Some(rest) = trimmed.strip_prefix("```") {
        *fence = match fence {
            Some(_) => None,
            None => Some(rest.to_owned()),
        };
        return;
    }
    if fence.is_some() {
        return;
    }
    if trimmed.starts_with("<details") {
        *details = true;
    }
    if trimmed.contains("</details>") {
        *details = false;
    }
}

fn closers(fence: Option<&str>, details: bool) -> (String, String) {
    let mut close = String::new();
    let mut reopen = String::new();
    if details {
        reopen.push_str("<details><summary>Show output (continued)</summary>\n\n");
    }
    if let Some(lang) = fence {
        close.push_str("```\n");
        reopen.push_str(&format!("```{lang}\n"));
    }
    if details {
        close.push_str("</details>\n");
    }
    (close, reopen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_text_cannot_mention_or_inject_html() {
        let s = escape("@admins <img src=x> [link](http://x) `code`");
        assert!(!s.contains("@a"), "{s}");
        assert!(!s.contains('<'), "{s}");
        assert!(s.contains("\\[link\\]"), "{s}");
        assert!(s.contains("\\`code\\`"), "{s}");
    }

    #[test]
    fn output_over_twelve_lines_folds_into_details() {
        let short = code_block("diff", &"x\n".repeat(12), "Show output");
        assert!(!short.contains("<details>"));
        let long = code_block("diff", &"x\n".repeat(13), "Show output");
        assert!(long.starts_with("<details><summary>Show output</summary>"));
        assert!(long.trim_end().ends_with("</details>"));
    }

    #[test]
    fn backticks_in_output_cannot_close_the_fence() {
        let block = code_block("", "a\n```\n````\n@x", "s");
        assert_eq!(block.matches("```").count(), 2, "{block}");
        assert!(!block.contains("````"), "{block}");
    }

    #[test]
    fn single_backticks_in_output_are_kept_as_written() {
        assert_eq!(
            code_text("run `atoll apply` by hand"),
            "run `atoll apply` by hand"
        );
    }

    #[test]
    fn long_body_splits_under_the_limit_with_balanced_fences() {
        let lines: String = (0..5000).map(|i| format!("  + line {i}\n")).collect();
        let body = format!("Intro\n\n{}", code_block("diff", &lines, "Show output"));
        let max = 20_000;
        let parts = split(&body, max);
        assert!(parts.len() > 2, "{}", parts.len());
        for part in &parts {
            assert!(part.chars().count() <= max);
            assert_eq!(part.matches("```").count() % 2, 0, "unbalanced fence");
            assert_eq!(
                part.matches("<details>").count(),
                part.matches("</details>").count()
            );
        }
        let all: String = parts.concat();
        assert!(all.contains("line 0\n") && all.contains("line 4999\n"));
    }

    #[test]
    fn a_reply_over_the_cap_keeps_its_first_parts_balanced_with_room_for_a_note() {
        let line = "x".repeat(3_900_000);
        let body = format!("**Plan Error**\n```\n{line}\n```\nFix it.\n");
        let capped = split_capped(&body, 65_536, 4, 1_000);
        assert_eq!((capped.parts.len(), capped.cut_after), (4, 2));
        assert!(capped.truncated() && capped.total > 50, "{}", capped.total);
        for part in &capped.parts {
            assert!(part.chars().count() <= 65_536 - 1_000);
            assert_eq!(part.matches("```").count() % 2, 0, "unbalanced fence");
        }
        assert!(capped.parts[0].starts_with("**Plan Error**"));
        assert!(capped.parts[3].starts_with("(continued, part 4 of 4)"));
        assert!(
            capped.parts[3].ends_with("Fix it.\n"),
            "the next step is kept"
        );
        assert!(
            capped.omitted.len() > 3_000_000,
            "the middle is kept for the log"
        );
        let one = split_capped(&body, 65_536, 1, 1_000);
        assert_eq!((one.parts.len(), one.cut_after), (1, 0));
        let small = split_capped("hello", 100, 1, 50);
        assert!(!small.truncated());
        assert_eq!((small.parts, small.total), (vec!["hello".to_owned()], 1));
    }

    #[test]
    fn short_body_is_one_part() {
        assert_eq!(split("hello", 100), vec!["hello".to_owned()]);
    }
}
