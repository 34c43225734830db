//! The screen at ready on the report page, cropped to its text.

use super::page::escape;
use super::session::session_name;
use crate::result::ResultFile;
use std::fmt::Write;

pub(super) fn screens(out: &mut String, result: &ResultFile) {
    let screens = &result.side.screens;
    if screens.is_empty() {
        return;
    }
    out.push_str("<section id=\"screens\"><h2>The screen at ready</h2>\n");
    // The first screen in full; the others (usually the same program again) folded.
    for (index, screen) in screens.iter().enumerate() {
        let heading = format!(
            "{}, trial {}",
            escape(&session_name(&screen.session)),
            screen.trial
        );
        let text = escape(&crop_screen(&screen.text));
        if index == 0 {
            let _ = writeln!(
                out,
                "<h3>{heading}</h3>\n<pre class=\"screen\">{text}</pre>"
            );
        } else {
            let _ = writeln!(
                out,
                "<details><summary>{heading}</summary>\n<pre class=\"screen\">{text}</pre></details>"
            );
        }
    }
    out.push_str("</section>\n");
}

/// Rows and columns of margin kept around a screen's text.
const CROP_MARGIN_ROWS: usize = 1;
const CROP_MARGIN_COLUMNS: usize = 2;
/// The longest run of empty rows kept inside a screen; a longer one becomes a line
/// that says how many rows it held.
const CROP_EMPTY_ROWS: usize = 3;

/// `screen` cut to the rows and columns that hold text, with a small margin: a program
/// that draws a few lines at the top of a 50-row terminal is not a tall black box.
/// Columns are counted in characters (the screen text has one per cell); a screen
/// without text stays as it is.
pub fn crop_screen(screen: &str) -> String {
    let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let Some(first) = rows.iter().position(|row| !row.is_empty()) else {
        return screen.to_string();
    };
    // `first` exists, so a last non-empty row does too.
    let last = rows
        .iter()
        .rposition(|row| !row.is_empty())
        .unwrap_or(first);
    let indent = rows[first..=last]
        .iter()
        .filter(|row| !row.is_empty())
        .map(|row| row.chars().take_while(|c| *c == ' ').count())
        .min()
        .unwrap_or(0);
    let skip = indent.saturating_sub(CROP_MARGIN_COLUMNS);
    let top = first.saturating_sub(CROP_MARGIN_ROWS);
    let bottom = (last + CROP_MARGIN_ROWS).min(rows.len() - 1);
    let mut cropped: Vec<String> = Vec::new();
    let mut empty = 0;
    for row in rows[top..=bottom].iter().chain([&"x"]) {
        if row.is_empty() {
            empty += 1;
            continue;
        }
        // A full-screen program draws its header at the top and its prompt at the bottom:
        // the empty rows between would be a tall black box, so a long run of them is
        // said in one line.
        if empty > CROP_EMPTY_ROWS {
            cropped.extend([
                String::new(),
                format!("({empty} empty rows)"),
                String::new(),
            ]);
        } else {
            cropped.extend(std::iter::repeat_n(String::new(), empty));
        }
        empty = 0;
        cropped.push(row.chars().skip(skip).collect());
    }
    // The "x" that ended the last run of empty rows.
    cropped.pop();
    // The right margin: trailing spaces on the widest row keep the box off the text.
    let width = cropped
        .iter()
        .map(|row| row.chars().count())
        .max()
        .unwrap_or(0);
    if let Some(widest) = cropped.iter_mut().find(|row| row.chars().count() == width) {
        widest.push_str(&" ".repeat(CROP_MARGIN_COLUMNS));
    }
    cropped.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_screen_is_cropped_to_its_text_with_a_margin() {
        let screen = "\n\n\n      hello\n\n        world   \n\n\n\n\n";
        assert_eq!(crop_screen(screen), "\n  hello\n\n    world  \n");
        assert_eq!(crop_screen("a\nb"), "a  \nb");
        assert_eq!(crop_screen("   \n  "), "   \n  ");
    }

    #[test]
    fn a_long_run_of_empty_rows_inside_a_screen_is_said_in_one_line() {
        let screen = format!(" header\n{}> \n", "\n".repeat(40));
        assert_eq!(crop_screen(&screen), " header\n\n(40 empty rows)  \n\n>");
        assert_eq!(crop_screen("a\n\n\n\nb"), "a  \n\n\n\nb");
    }
}
