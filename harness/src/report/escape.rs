//! Escaping text for the formats `report/` writes: XML (JUnit, SVG and HTML alike) and Markdown table cells.

/// Text as XML character data or attribute value; characters XML 1.0 cannot hold at all become U+FFFD.
pub fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' | '\t' | '\r' => out.push(ch),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// Text as one Markdown table cell: a `|` would end the cell and a newline the row.
pub fn markdown_cell(cell: &str) -> String {
    cell.replace('|', "\\|").replace('\n', " ")
}
