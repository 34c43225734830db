//! Plain-text tables for people, printed on stderr by the commands.

/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text columns.
    Left,
    /// Number columns.
    Right,
}

/// Renders a table with a header row, a rule under it, and two spaces between
/// columns. Widths count characters, not bytes, so `µs` lines up.
pub fn render(headers: &[&str], aligns: &[Align], rows: &[Vec<String>]) -> String {
    let columns = headers.len();
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (index, cell) in row.iter().enumerate().take(columns) {
            widths[index] = widths[index].max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut out = String::new();
        for (index, cell) in cells.enumerate().take(columns) {
            if index > 0 {
                out.push_str("  ");
            }
            let pad = widths[index].saturating_sub(cell.chars().count());
            let align = aligns.get(index).copied().unwrap_or(Align::Left);
            if align == Align::Right {
                out.extend(std::iter::repeat_n(' ', pad));
                out.push_str(cell);
            } else {
                out.push_str(cell);
                out.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
        out
    };
    let mut out = line(&mut headers.iter().copied());
    let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
    out.push_str(&line(&mut rule.iter().map(String::as_str)));
    for row in rows {
        out.push_str(&line(&mut row.iter().map(String::as_str)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_by_characters() {
        let table = render(
            &["metric", "median"],
            &[Align::Left, Align::Right],
            &[
                vec!["cold".into(), "412 ms".into()],
                vec!["kernel_exec".into(), "31.0 µs".into()],
            ],
        );
        assert_eq!(
            table,
            "metric        median\n-----------  -------\ncold          412 ms\nkernel_exec  31.0 µs\n"
        );
    }
}
