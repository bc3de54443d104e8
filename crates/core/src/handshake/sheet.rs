//! Prompt sheets (context-handshake.md §4.1.5): the order and wording of every section of the
//! assistant's context bundle as a template, so wording changes need no code. A sheet is text:
//! `[section NAME]` blocks render in the order written, `[style NAME]` blocks are the writing
//! styles a stream or conversation picks by `writing_style`, `[text NAME]` blocks are fragments
//! (the role description and its rationale); `{placeholder}`s are filled per turn, `{{`/`}}`
//! are literal braces, `#` lines are comments. A sheet is checked whole when it is stored
//! ([`PromptSheet::parse`] names the line and the reason), so rendering never fails.

use std::collections::BTreeMap;

/// The built-in sheet, used wherever no override is stored.
pub const BUILTIN_SHEET: &str = include_str!("default_sheet.txt");
/// Largest sheet, in bytes.
pub const MAX_SHEET_BYTES: usize = 16 * 1024;
/// The sections a sheet may have.
pub const SECTIONS: [&str; 10] = [
    "input",
    "history",
    "style",
    "role",
    "abstract",
    "guidance",
    "goal",
    "phase3",
    "attachments",
    "warning",
];
/// The placeholders a section may use.
pub const PLACEHOLDERS: [&str; 14] = [
    "latest_user_input",
    "chat_history",
    "style",
    "data_abstract",
    "user_guidance",
    "system_role_description",
    "research_role_rationale",
    "synthesized_goal",
    "summary",
    "points_of_interest",
    "attachments",
    "warning",
    "page",
    "mode",
];
/// Fragments every sheet must define.
const REQUIRED_TEXTS: [&str; 2] = ["system_role_description", "research_role_rationale"];
/// Interaction modes a sheet is chosen by.
pub const MODES: [&str; 2] = ["question", "action"];

/// Why a sheet was refused (code `invalid_prompt_sheet`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct SheetError {
    /// 1-based line (0: the sheet as a whole).
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

/// One piece of a template: literal text or a placeholder.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Slot(&'static str),
}

/// A checked prompt sheet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptSheet {
    sections: Vec<(String, Vec<Piece>)>,
    styles: BTreeMap<String, String>,
    texts: BTreeMap<String, String>,
}

impl PromptSheet {
    /// The built-in sheet.
    pub fn builtin() -> PromptSheet {
        PromptSheet::parse(BUILTIN_SHEET).expect("the built-in sheet is valid")
    }

    /// Reads and checks a sheet.
    ///
    /// ```
    /// use stepwise_core::handshake::PromptSheet;
    /// let error = PromptSheet::parse("[section goal]\n## Goal\n{goa}\n").unwrap_err();
    /// assert_eq!(error.line, 3);
    /// assert!(error.reason.contains("unknown placeholder `{goa}`"));
    /// ```
    pub fn parse(text: &str) -> Result<PromptSheet, SheetError> {
        if text.len() > MAX_SHEET_BYTES {
            return Err(whole(format!(
                "the sheet is larger than {MAX_SHEET_BYTES} bytes"
            )));
        }
        let mut sheet = PromptSheet {
            sections: Vec::new(),
            styles: BTreeMap::new(),
            texts: BTreeMap::new(),
        };
        let mut current: Option<(String, String, usize, Vec<String>)> = None;
        for (index, line) in text.lines().enumerate() {
            let number = index + 1;
            if line.starts_with('#') && current.as_ref().is_none_or(|c| c.0 != "section") {
                continue;
            }
            if let Some(header) = line.strip_prefix('[') {
                let header = header.trim_end();
                let Some(inner) = header.strip_suffix(']') else {
                    return Err(at(number, "a block header ends with `]`"));
                };
                if let Some(block) = current.take() {
                    sheet.close(block)?;
                }
                let (kind, name) = inner.split_once(' ').unwrap_or((inner, ""));
                let name = name.trim();
                if !matches!(kind, "section" | "style" | "text") {
                    return Err(at(
                        number,
                        "a block is `[section NAME]`, `[style NAME]` or `[text NAME]`",
                    ));
                }
                if name.is_empty()
                    || !name
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
                {
                    return Err(at(
                        number,
                        "a block name is lowercase letters, digits and `_`",
                    ));
                }
                current = Some((kind.to_owned(), name.to_owned(), number, Vec::new()));
                continue;
            }
            match current.as_mut() {
                Some(block) => block.3.push(line.to_owned()),
                None if line.trim().is_empty() || line.starts_with('#') => {}
                None => return Err(at(number, "text before the first block header")),
            }
        }
        if let Some(block) = current.take() {
            sheet.close(block)?;
        }
        for name in REQUIRED_TEXTS {
            if !sheet.texts.contains_key(name) {
                return Err(whole(format!("the sheet has no `[text {name}]`")));
            }
        }
        if !sheet.styles.contains_key("default") {
            return Err(whole("the sheet has no `[style default]`".to_owned()));
        }
        if !sheet.sections.iter().any(|(name, _)| name == "attachments") {
            return Err(whole(
                "the sheet has no `[section attachments]`: supplied context would never reach the model".to_owned(),
            ));
        }
        Ok(sheet)
    }

    fn close(
        &mut self,
        (kind, name, line, body): (String, String, usize, Vec<String>),
    ) -> Result<(), SheetError> {
        let text = body.join("\n").trim_end().to_owned();
        let duplicate = || at(line, &format!("`[{kind} {name}]` is defined twice"));
        match kind.as_str() {
            "section" => {
                if !SECTIONS.contains(&name.as_str()) {
                    let known = SECTIONS.join(", ");
                    return Err(at(
                        line,
                        &format!("unknown section `{name}`; known: {known}"),
                    ));
                }
                if self.sections.iter().any(|(n, _)| *n == name) {
                    return Err(duplicate());
                }
                let mut pieces = Vec::new();
                for (offset, body_line) in body.iter().enumerate() {
                    if offset > 0 {
                        push_text(&mut pieces, "\n");
                    }
                    template(body_line, line + 1 + offset, &mut pieces)?;
                }
                trim_trailing_newlines(&mut pieces);
                self.sections.push((name, pieces));
            }
            "style" => {
                if self.styles.insert(name.clone(), text).is_some() {
                    return Err(duplicate());
                }
            }
            _ => {
                if self.texts.insert(name.clone(), text).is_some() {
                    return Err(duplicate());
                }
            }
        }
        Ok(())
    }

    /// The writing styles it defines.
    pub fn styles(&self) -> impl Iterator<Item = &str> {
        self.styles.keys().map(String::as_str)
    }

    /// The style fragment `name`, or the default one.
    pub fn style(&self, name: Option<&str>) -> &str {
        name.and_then(|n| self.styles.get(n))
            .or_else(|| self.styles.get("default"))
            .map_or("", String::as_str)
    }

    /// The text fragment `name` (empty when undefined).
    pub fn text(&self, name: &str) -> &str {
        self.texts.get(name).map_or("", String::as_str)
    }

    /// The section names, in order.
    pub fn section_names(&self) -> impl Iterator<Item = &str> {
        self.sections.iter().map(|(n, _)| n.as_str())
    }

    /// Renders the sections in order with `values` (a missing value is empty); a section whose
    /// placeholders are all empty is left out; sections are separated by a blank line.
    pub fn render(&self, values: &BTreeMap<&str, String>) -> String {
        let mut out = String::new();
        for (_, pieces) in &self.sections {
            let slots: Vec<&str> = pieces
                .iter()
                .filter_map(|p| match p {
                    Piece::Slot(name) => Some(*name),
                    Piece::Text(_) => None,
                })
                .collect();
            let empty = |name: &&str| values.get(*name).is_none_or(|v| v.trim().is_empty());
            if !slots.is_empty() && slots.iter().all(empty) {
                continue;
            }
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            for piece in pieces {
                match piece {
                    Piece::Text(text) => out.push_str(text),
                    Piece::Slot(name) => out.push_str(values.get(name).map_or("", |v| v.trim())),
                }
            }
        }
        out
    }
}

/// Whether `id` names a sheet: `<page>.<mode>`, the page `default` or one of `pages`.
///
/// ```
/// use stepwise_core::handshake::is_sheet_id;
/// assert!(is_sheet_id("research.question", &["research"]));
/// assert!(is_sheet_id("default.action", &[]));
/// assert!(!is_sheet_id("research.shout", &["research"]));
/// ```
pub fn is_sheet_id(id: &str, pages: &[&str]) -> bool {
    let Some((page, mode)) = id.split_once('.') else {
        return false;
    };
    (page == "default" || pages.contains(&page)) && MODES.contains(&mode)
}

fn template(line: &str, number: usize, pieces: &mut Vec<Piece>) -> Result<(), SheetError> {
    let mut rest = line;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("{{") {
            push_text(pieces, "{");
            rest = after;
        } else if let Some(after) = rest.strip_prefix("}}") {
            push_text(pieces, "}");
            rest = after;
        } else if let Some(after) = rest.strip_prefix('{') {
            let Some(end) = after.find('}') else {
                return Err(at(
                    number,
                    "a `{` is not closed (write `{{` for a literal brace)",
                ));
            };
            let name = &after[..end];
            let Some(known) = PLACEHOLDERS.iter().find(|p| **p == name) else {
                let known = PLACEHOLDERS.join(", ");
                return Err(at(
                    number,
                    &format!("unknown placeholder `{{{name:.40}}}`; known: {known}"),
                ));
            };
            pieces.push(Piece::Slot(known));
            rest = &after[end + 1..];
        } else if rest.starts_with('}') {
            return Err(at(
                number,
                "a `}` closes nothing (write `}}` for a literal brace)",
            ));
        } else {
            let end = rest.find(['{', '}']).unwrap_or(rest.len());
            push_text(pieces, &rest[..end]);
            rest = &rest[end..];
        }
    }
    Ok(())
}

fn push_text(pieces: &mut Vec<Piece>, text: &str) {
    if let Some(Piece::Text(last)) = pieces.last_mut() {
        last.push_str(text);
    } else {
        pieces.push(Piece::Text(text.to_owned()));
    }
}

fn trim_trailing_newlines(pieces: &mut Vec<Piece>) {
    if let Some(Piece::Text(last)) = pieces.last_mut() {
        let kept = last.trim_end().len();
        last.truncate(kept);
        if last.is_empty() {
            pieces.pop();
        }
    }
}

fn at(line: usize, reason: &str) -> SheetError {
    SheetError {
        line,
        reason: reason.to_owned(),
    }
}

fn whole(reason: String) -> SheetError {
    SheetError { line: 0, reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_sheet_renders_its_sections_in_order_and_leaves_empty_ones_out() {
        let sheet = PromptSheet::builtin();
        let mut values = BTreeMap::new();
        values.insert("style", sheet.style(Some("concise")).to_owned());
        values.insert("synthesized_goal", "Track EGFR.".to_owned());
        values.insert("attachments", "### one".to_owned());
        let text = sheet.render(&values);
        let style = text.find("## Writing style").unwrap();
        let goal = text.find("## Current goal").unwrap();
        let attachments = text.find("## Supplied Context Attachments").unwrap();
        assert!(style < goal && goal < attachments);
        assert!(!text.contains("## Phase 3 outputs"));
        assert!(text.contains("at most three sentences"));
    }

    #[test]
    fn broken_sheets_are_refused_with_their_line() {
        let base = "[text system_role_description]\nr\n[text research_role_rationale]\nr\n[style default]\ns\n";
        let cases = [
            ("[section attachments]\n{attachments\n", 8, "not closed"),
            ("[section attachments]\n{attachments} }}\n", 0, ""),
            ("[section nope]\n", 7, "unknown section"),
            ("[section goal]\n[section goal]\n", 8, "defined twice"),
            ("[block x]\n", 7, "`[section NAME]`"),
            (
                "[section goal]\n{synthesized_goal}\n",
                0,
                "no `[section attachments]`",
            ),
        ];
        for (tail, line, reason) in cases {
            let result = PromptSheet::parse(&format!("{base}{tail}"));
            if line == 0 && reason.is_empty() {
                assert!(result.is_ok(), "{tail}");
                continue;
            }
            let error = result.expect_err(tail);
            assert_eq!(error.line, line, "{tail}: {error}");
            assert!(error.reason.contains(reason), "{tail}: {error}");
        }
        assert_eq!(PromptSheet::parse("stray\n").unwrap_err().line, 1);
    }
}
