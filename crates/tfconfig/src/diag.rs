//! Terraform-shaped diagnostics: severity, summary, detail and a subject span in a source file,
//! rendered as Terraform prints them (`Error: ...`, `on FILE line N, in CONTEXT:`, the source
//! line with the span marked, the detail). A long line is quoted as a short window around the
//! subject, and a detail is kept to a few kilobytes, so one bad input cannot make a huge report.

use std::ops::Range;

/// Most characters of a source line quoted in a diagnostic.
pub const MAX_QUOTED: usize = 200;
/// Characters quoted before the subject's column when a line is cut.
const LEAD: usize = 60;
/// Most bytes of a diagnostic's detail (details quote values, which can be long).
pub const MAX_DETAIL: usize = 4096;

/// Error or warning.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// A byte range in one file of the [`SourceMap`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub file: usize,
    pub range: Range<usize>,
}

/// One diagnostic. `subject` is absent for diagnostics about the whole load (for example a
/// `--var` naming an undeclared variable).
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub summary: String,
    pub detail: String,
    pub subject: Option<Span>,
}

impl Diagnostic {
    pub fn error(
        summary: impl Into<String>,
        detail: impl Into<String>,
        subject: Option<Span>,
    ) -> Self {
        Diagnostic {
            severity: Severity::Error,
            summary: summary.into(),
            detail: bounded(detail.into()),
            subject,
        }
    }

    pub fn warning(
        summary: impl Into<String>,
        detail: impl Into<String>,
        subject: Option<Span>,
    ) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            summary: summary.into(),
            detail: bounded(detail.into()),
            subject,
        }
    }
}

/// `detail` cut to [`MAX_DETAIL`] bytes (at a character boundary), marked where it was cut.
fn bounded(mut detail: String) -> String {
    if detail.len() <= MAX_DETAIL {
        return detail;
    }
    let mut end = MAX_DETAIL;
    while !detail.is_char_boundary(end) {
        end -= 1;
    }
    detail.truncate(end);
    detail.push_str("… (cut: the detail was too long to show)");
    detail
}

/// At most [`MAX_QUOTED`] characters of `line` around the 0-based character column `col`, with
/// `…` where the line was cut, and where `col` falls in them.
fn window(line: &str, col: usize) -> (String, usize) {
    let total = line.chars().count();
    if total <= MAX_QUOTED {
        return (line.to_owned(), col);
    }
    let start = col.saturating_sub(LEAD).min(total - MAX_QUOTED);
    let end = start + MAX_QUOTED;
    let body: String = line.chars().skip(start).take(MAX_QUOTED).collect();
    let lead = if start > 0 { "…" } else { "" };
    let tail = if end < total { "…" } else { "" };
    let at = col - start + usize::from(start > 0);
    (format!("{lead}{body}{tail}"), at)
}

/// A source file: its name relative to the root module directory, its text and line index.
#[derive(Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    line_starts: Vec<usize>,
    /// Top-level block header ranges and their context strings (`resource "t" "n"`).
    contexts: Vec<(Range<usize>, String)>,
}

impl SourceFile {
    fn new(name: String, text: String) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        SourceFile {
            name,
            text,
            line_starts,
            contexts: Vec::new(),
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self
            .line_starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        let start = self.line_starts[line];
        let col = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count());
        (line + 1, col + 1)
    }

    fn line_text(&self, line: usize) -> &str {
        let start = self.line_starts[line - 1];
        let end = self
            .line_starts
            .get(line)
            .map_or(self.text.len(), |e| e - 1);
        self.text
            .get(start..end)
            .unwrap_or("")
            .trim_end_matches('\r')
    }
}

/// All files read during a load, so diagnostics can quote them.
#[derive(Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    /// Adds a file and returns its id.
    pub fn add(&mut self, name: String, text: String) -> usize {
        self.files.push(SourceFile::new(name, text));
        self.files.len() - 1
    }

    pub fn get(&self, id: usize) -> Option<&SourceFile> {
        self.files.get(id)
    }

    pub fn text(&self, id: usize) -> &str {
        self.files.get(id).map_or("", |f| f.text.as_str())
    }

    /// Records a top-level block so diagnostics inside it say `in <context>`.
    pub fn add_context(&mut self, file: usize, range: Range<usize>, context: String) {
        if let Some(f) = self.files.get_mut(file) {
            f.contexts.push((range, context));
        }
    }

    /// File name, line and column of a span's start.
    pub fn locate(&self, span: &Span) -> Option<(&str, usize, usize)> {
        let f = self.files.get(span.file)?;
        let (line, col) = f.line_col(span.range.start);
        Some((f.name.as_str(), line, col))
    }

    /// `main.tf:3,1-13` (same line) or `main.tf:3,1-5,2`, as Terraform prints ranges.
    pub fn fmt_range(&self, span: &Span) -> String {
        let Some(f) = self.files.get(span.file) else {
            return String::new();
        };
        let (l1, c1) = f.line_col(span.range.start);
        let (l2, c2) = f.line_col(span.range.end);
        if l1 == l2 {
            format!("{}:{l1},{c1}-{c2}", f.name)
        } else {
            format!("{}:{l1},{c1}-{l2},{c2}", f.name)
        }
    }

    /// Renders a diagnostic as Terraform does (without colour, with `^` marking the subject).
    pub fn render(&self, d: &Diagnostic) -> String {
        let mut out = String::new();
        let label = match d.severity {
            Severity::Error => "Error",
            Severity::Warning => "Warning",
        };
        out.push_str(&format!("{label}: {}\n", d.summary));
        if let Some(snippet) = d.subject.as_ref().and_then(|s| self.snippet(s)) {
            out.push('\n');
            out.push_str(&snippet);
        }
        if !d.detail.is_empty() {
            out.push('\n');
            for para in d.detail.split('\n') {
                out.push_str(&wrap(para, 78));
                out.push('\n');
            }
        }
        out
    }

    fn snippet(&self, span: &Span) -> Option<String> {
        let f = self.files.get(span.file)?;
        let (line, col) = f.line_col(span.range.start);
        let context = f
            .contexts
            .iter()
            .find(|(r, _)| r.start <= span.range.start && span.range.start < r.end.max(r.start + 1))
            .map(|(_, c)| format!(", in {c}"))
            .unwrap_or_default();
        let full = f.line_text(line);
        let (text, at) = window(full, col - 1);
        let prefix = format!("{line:>4}: ");
        let (end_line, end_col) = f.line_col(span.range.end.max(span.range.start));
        let width = if end_line == line {
            end_col.saturating_sub(col).max(1)
        } else {
            full.chars().count().saturating_sub(col - 1).max(1)
        };
        let room = text.chars().count().saturating_sub(at).max(1);
        let marks = format!(
            "{}{}",
            " ".repeat(prefix.len() + at),
            "^".repeat(width.min(room))
        );
        Some(format!(
            "  on {} line {line}{context}:\n{prefix}{text}\n{}\n",
            f.name,
            marks.trim_end()
        ))
    }
}

/// Word-wraps a paragraph at `width` columns.
fn wrap(text: &str, width: usize) -> String {
    if text.starts_with(' ') {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut line_len = 0;
    for word in text.split(' ') {
        let wlen = word.chars().count();
        if line_len > 0 && line_len + 1 + wlen > width {
            out.push('\n');
            line_len = 0;
        } else if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        out.push_str(word);
        line_len += wlen;
    }
    out
}

/// "Did you mean" helper: the first candidate whose edit distance to `given` is below 3.
pub fn suggest<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates.into_iter().find(|c| levenshtein(given, c) < 3)
}

/// Edit distance between two strings (characters).
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// ` Did you mean "x"?` or an empty string.
pub fn did_you_mean<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    suggest(given, candidates)
        .map(|s| format!(" Did you mean \"{s}\"?"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_quotes_line_context_and_marks_span() {
        let mut map = SourceMap::default();
        let text = "module \"x\" {\n  proxxmox_node = \"pve\"\n}\n".to_owned();
        let id = map.add("main.tf".into(), text.clone());
        map.add_context(id, 0..text.len(), "module \"x\"".into());
        let start = text.find("proxxmox").unwrap_or(0);
        let d = Diagnostic::error(
            "Unsupported argument",
            "An argument named \"proxxmox_node\" is not expected here.",
            Some(Span {
                file: id,
                range: start..start + 13,
            }),
        );
        let out = map.render(&d);
        assert_eq!(
            out,
            "Error: Unsupported argument\n\n  on main.tf line 2, in module \"x\":\n   2:   proxxmox_node = \"pve\"\n        ^^^^^^^^^^^^^\n\nAn argument named \"proxxmox_node\" is not expected here.\n"
        );
    }

    #[test]
    fn a_long_line_is_quoted_as_a_short_window_around_the_subject() {
        let mut map = SourceMap::default();
        let line = format!(
            "x = \"{}BAD{}\"\n",
            "a".repeat(100_000),
            "b".repeat(100_000)
        );
        let id = map.add("main.tf".into(), line.clone());
        let start = line.find("BAD").unwrap_or(0);
        let d = Diagnostic::error(
            "Invalid value",
            "bad",
            Some(Span {
                file: id,
                range: start..start + 3,
            }),
        );
        let out = map.render(&d);
        assert!(out.len() < 1000, "{} bytes quoted", out.len());
        let quoted = out.lines().find(|l| l.contains("BAD")).unwrap_or_default();
        assert!(quoted.contains("…a") && quoted.contains("b…"), "{quoted}");
        let marks = out
            .lines()
            .find(|l| l.trim_start().starts_with('^'))
            .unwrap_or_default();
        let bad = quoted
            .char_indices()
            .position(|(i, _)| quoted[i..].starts_with("BAD"));
        assert_eq!(marks.find('^'), bad, "{quoted}\n{marks}");
        assert_eq!(marks.trim().len(), 3, "{marks}");
    }

    #[test]
    fn a_long_detail_is_cut() {
        let d = Diagnostic::error("x", "é".repeat(10_000), None);
        assert!(d.detail.len() < MAX_DETAIL + 100);
    }

    #[test]
    fn line_col_counts_characters() {
        let f = SourceFile::new("a".into(), "é = 1\nb = 2".into());
        assert_eq!(f.line_col(3), (1, 3));
        assert_eq!(f.line_col(7), (2, 1));
    }
}
