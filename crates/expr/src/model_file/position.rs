//! Byte offsets to 1-based line/column positions, and characters of a
//! string value's content back to their place in the file.

use std::ops::Range;

/// A 1-based line and column in a file; the column counts characters (a tab
/// is one character).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    /// 1-based line.
    pub line: usize,
    /// 1-based character column.
    pub column: usize,
}

impl Position {
    /// The position of byte `offset` of `source` (clamped to the source and
    /// moved back to a character boundary).
    pub fn of_offset(source: &str, offset: usize) -> Position {
        let mut offset = offset.min(source.len());
        while !source.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &source[..offset];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Position {
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
        }
    }
}

/// The byte offset in `source` of character `column` (1-based) of the
/// decoded content of the TOML string value whose span (quotes included) is
/// `span`.
///
/// Exact for literal strings (`'…'`, `'''…'''`) and for basic strings
/// (`"…"`, `"""…"""`), escapes included: an escape sequence (`\n`, `\"`,
/// `\u00e9`, …) counts as the one character it decodes to, and a
/// line-ending backslash as none. A column past the end maps to the closing
/// quote.
pub(crate) fn string_char_offset(source: &str, span: Range<usize>, column: usize) -> usize {
    let Some(raw) = source.get(span.clone()) else {
        return span.start.min(source.len());
    };
    let (delim, basic) = if raw.starts_with("\"\"\"") {
        (3, true)
    } else if raw.starts_with("'''") {
        (3, false)
    } else if raw.starts_with('"') {
        (1, true)
    } else if raw.starts_with('\'') {
        (1, false)
    } else {
        return span.start;
    };
    let mut start = delim;
    if delim == 3 {
        // a newline right after the opening delimiter is trimmed
        if raw[start..].starts_with("\r\n") {
            start += 2;
        } else if raw[start..].starts_with('\n') {
            start += 1;
        }
    }
    let end = raw.len().saturating_sub(delim).max(start);
    let content = &raw[start..end];
    let mut remaining = column.saturating_sub(1);
    let mut chars = content.char_indices().peekable();
    while let Some(&(b, c)) = chars.peek() {
        if basic && c == '\\' {
            let mut ahead = content[b + 1..].chars();
            match ahead.next() {
                // line-ending backslash: it and the following whitespace decode to nothing
                Some(w) if w.is_whitespace() => {
                    chars.next();
                    while chars.peek().is_some_and(|&(_, w)| w.is_whitespace()) {
                        chars.next();
                    }
                    continue;
                }
                Some(e) => {
                    if remaining == 0 {
                        return span.start + start + b;
                    }
                    let skip = match e {
                        'u' => 5,
                        'U' => 9,
                        'x' => 3,
                        _ => 1,
                    };
                    chars.next();
                    for _ in 0..skip {
                        chars.next();
                    }
                    remaining -= 1;
                    continue;
                }
                None => {}
            }
        }
        if remaining == 0 {
            return span.start + start + b;
        }
        chars.next();
        remaining -= 1;
    }
    span.start + end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_to_positions() {
        let s = "ab\ncθd\n\nx";
        assert_eq!(Position::of_offset(s, 0), Position { line: 1, column: 1 });
        assert_eq!(Position::of_offset(s, 3), Position { line: 2, column: 1 });
        // after the two-byte θ
        assert_eq!(Position::of_offset(s, 6), Position { line: 2, column: 3 });
        assert_eq!(Position::of_offset(s, 9), Position { line: 4, column: 1 });
        assert_eq!(Position::of_offset(s, 99), Position { line: 4, column: 2 });
    }

    #[test]
    fn string_characters_map_to_the_file() {
        // each case: the file text, the string value's span, the decoded
        // content, and for every character its expected byte offset
        let cases = [
            r#"k = "a+bc""#,
            r#"k = 'a+bc'"#,
            "k = \"\"\"\na+bc\"\"\"",
            "k = '''a+bc'''",
        ];
        for file in cases {
            let start = 4;
            let span = start..file.len();
            let open = file[start..].find(['a']).unwrap() + start;
            for (i, _) in "a+bc".chars().enumerate() {
                assert_eq!(
                    string_char_offset(file, span.clone(), i + 1),
                    open + i,
                    "{file}"
                );
            }
            // one past the end: the closing quote
            let close = file.len()
                - if file.ends_with("\"\"\"") || file.ends_with("'''") {
                    3
                } else {
                    1
                };
            assert_eq!(string_char_offset(file, span.clone(), 5), close, "{file}");
        }
        // escapes count as the character they decode to
        let file = r#"k = "\u00e9 + \"x\" + \\y""#;
        let span = 4..file.len();
        // decoded: é + "x" + \y ; char 6 is `x`, char 12 is `y`
        assert_eq!(&file[string_char_offset(file, span.clone(), 6)..][..1], "x");
        assert_eq!(
            &file[string_char_offset(file, span.clone(), 12)..][..1],
            "y"
        );
        // a line-ending backslash decodes to nothing
        let file = "k = \"\"\"a + \\\n    b\"\"\"";
        let span = 4..file.len();
        assert_eq!(&file[string_char_offset(file, span, 5)..][..1], "b");
    }
}
