//! Free text that people give (game names, score-pad players): what it may contain.

/// Whether `c` may not stand in a name: control characters (CR and LF would start new
/// lines in mails and logs) and the invisible format characters that reorder or hide text
/// (bidirectional overrides and isolates, zero-width characters, the byte-order mark).
#[must_use]
pub fn unprintable(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2069}'
                | '\u{FEFF}'
        )
}

/// `s` with every [`unprintable`] character replaced by a space: for text stored before
/// such names were refused, where it is shown (mails).
#[must_use]
pub fn printable(s: &str) -> String {
    s.chars()
        .map(|c| if unprintable(c) { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_breaks_and_bidi_overrides_are_unprintable_letters_are_not() {
        for c in [
            '\r', '\n', '\t', '\u{0}', '\u{7f}', '\u{202E}', '\u{200B}', '\u{FEFF}',
        ] {
            assert!(unprintable(c), "{c:?}");
        }
        for c in ['a', 'ß', 'é', ' ', '-', '🂡', '中'] {
            assert!(!unprintable(c), "{c:?}");
        }
        assert_eq!(printable("Runde\r\nBcc: x"), "Runde  Bcc: x");
    }
}
