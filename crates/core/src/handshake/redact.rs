//! Redaction of artifact text before it reaches a prompt or a person: strings that look like API
//! keys or bearer tokens, and e-mail addresses, are replaced by a bracketed label.

/// Replacement of a key-like string.
pub const KEY_MARK: &str = "[redacted key]";
/// Replacement of an e-mail address.
pub const EMAIL_MARK: &str = "[redacted e-mail]";

/// `text` with key-like words and e-mail addresses replaced. A word is key-like when it has a
/// well-known key prefix (`sk-`, `sk_`, `AKIA`, `AIza`, `ghp_`, `xox`) followed by at least 12
/// more characters, or is 32 or more characters of letters, digits, `-` and `_` mixing digits
/// and letters.
///
/// ```
/// use stepwise_core::handshake::redact;
/// let text = "mail ann@example.org, key sk-abcdefghijklmnop1234, id 42";
/// assert_eq!(redact(text), "mail [redacted e-mail], key [redacted key], id 42");
/// ```
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word_start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        if is_word_char(c) {
            word_start.get_or_insert(i);
            continue;
        }
        if let Some(start) = word_start.take() {
            out.push_str(replacement(&text[start..i]));
        }
        out.push(c);
    }
    if let Some(start) = word_start {
        out.push_str(replacement(&text[start..]));
    }
    out
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '@' | '+')
}

/// What a word becomes: a mark, or itself. A trailing `.` (end of a sentence) is kept.
fn replacement(word: &str) -> &str {
    let core = word.trim_end_matches('.');
    if is_email(core) {
        return if core.len() == word.len() {
            EMAIL_MARK
        } else {
            "[redacted e-mail]."
        };
    }
    if is_key(core) {
        return if core.len() == word.len() {
            KEY_MARK
        } else {
            "[redacted key]."
        };
    }
    word
}

fn is_email(word: &str) -> bool {
    let Some((local, domain)) = word.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.contains('@')
        && domain
            .rsplit('.')
            .next()
            .is_some_and(|tld| tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic()))
}

fn is_key(word: &str) -> bool {
    const PREFIXES: [&str; 6] = ["sk-", "sk_", "AKIA", "AIza", "ghp_", "xox"];
    if PREFIXES
        .iter()
        .any(|p| word.starts_with(p) && word.len() >= p.len() + 12)
    {
        return true;
    }
    word.len() >= 32
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && word.chars().any(|c| c.is_ascii_digit())
        && word.chars().any(|c| c.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn ordinary_text_is_kept_whole() {
        let text = "EGFR-TKI resistance in 2023, see doi 10.1000/182. Dose: 5 mg.";
        assert_eq!(redact(text), text);
    }

    #[test]
    fn long_mixed_tokens_and_sentence_final_addresses_are_marked() {
        assert_eq!(
            redact("Bearer 0123456789abcdef0123456789abcdef done"),
            "Bearer [redacted key] done"
        );
        assert_eq!(
            redact("write to bob@lab.io."),
            "write to [redacted e-mail]."
        );
        assert_eq!(redact("AKIAABCDEFGHIJKLMNOP"), "[redacted key]");
    }
}
