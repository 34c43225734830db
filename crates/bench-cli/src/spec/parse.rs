//! Reading a spec: TOML syntax, then the typed structs, then the checks serde cannot
//! make (regexes, zero timeouts, placeholders used where they have no value). Every
//! error is `file:line:column: message` and names the key.

use super::check::{check, model_script};
use super::model::Spec;
use super::words::{KeyPath, Segment, key_name};
use std::ops::Range;
use std::path::Path;
use toml::de::{DeTable, DeValue};

/// A spec that could not be read, with where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct SpecError {
    /// The file name as the user gave it.
    pub file: String,
    /// 1-based line, 0 when the error has no position.
    pub line: usize,
    /// 1-based column in characters, 0 when the error has no position.
    pub column: usize,
    /// What is wrong, naming the key.
    pub message: String,
}

impl SpecError {
    fn render(&self) -> String {
        if self.line == 0 {
            format!("{}: {}", self.file, self.message)
        } else {
            format!(
                "{}:{}:{}: {}",
                self.file, self.line, self.column, self.message
            )
        }
    }
}

/// Renders the table a key sits in: `[measure]`, `[[build]] #2`, `the top level`.
fn table_name(path: &[Segment]) -> String {
    if path.is_empty() {
        return "the top level".to_owned();
    }
    // The innermost array element decides the form: `[[install.write]] #1`.
    if let Some(Segment::Index(index)) = path.last() {
        let keys: Vec<&str> = path
            .iter()
            .filter_map(|s| match s {
                Segment::Key(k) => Some(k.as_str()),
                Segment::Index(_) => None,
            })
            .collect();
        return format!("[[{}]] #{}", keys.join("."), index + 1);
    }
    format!("[{}]", key_name(path))
}

struct Entry {
    path: KeyPath,
    key_span: Range<usize>,
    value_span: Range<usize>,
}

/// Every key of the document with its spans, so errors can point at them.
struct Index {
    entries: Vec<Entry>,
}

impl Index {
    fn build(table: &DeTable<'_>) -> Index {
        let mut entries = Vec::new();
        walk_table(table, &mut Vec::new(), &mut entries);
        Index { entries }
    }

    fn by_path(&self, path: &[Segment]) -> Option<&Entry> {
        self.entries.iter().find(|e| e.path == path)
    }

    fn by_key_span(&self, span: &Range<usize>) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key_span == *span)
    }

    /// The innermost entry whose value contains `span`.
    fn by_value_span(&self, span: &Range<usize>) -> Option<&Entry> {
        self.entries
            .iter()
            .filter(|e| e.value_span.start <= span.start && span.end <= e.value_span.end)
            .min_by_key(|e| e.value_span.end - e.value_span.start)
    }
}

fn walk_table(table: &DeTable<'_>, path: &mut KeyPath, out: &mut Vec<Entry>) {
    for (key, value) in table.iter() {
        path.push(Segment::Key(key.get_ref().to_string()));
        out.push(Entry {
            path: path.clone(),
            key_span: key.span(),
            value_span: value.span(),
        });
        walk_value(value.get_ref(), path, out);
        path.pop();
    }
}

fn walk_value(value: &DeValue<'_>, path: &mut KeyPath, out: &mut Vec<Entry>) {
    match value {
        DeValue::Table(table) => walk_table(table, path, out),
        DeValue::Array(array) => {
            for (index, item) in array.iter().enumerate() {
                path.push(Segment::Index(index));
                out.push(Entry {
                    path: path.clone(),
                    key_span: item.span(),
                    value_span: item.span(),
                });
                walk_value(item.get_ref(), path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// Levenshtein distance, for "did you mean".
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let current = row[j + 1];
            row[j + 1] = if ca == *cb {
                previous
            } else {
                1 + previous.min(row[j]).min(row[j + 1])
            };
            previous = current;
        }
    }
    row[b.len()]
}

/// The closest candidate, when it is close enough to be a typo.
fn suggest<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (edit_distance(name, c), *c))
        .filter(|(distance, c)| *distance <= c.len().max(name.len()).div_ceil(3))
        .min()
        .map(|(_, c)| c)
}

/// Pulls the names between backticks out of serde's messages.
fn backticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// Reads a spec from text. `file` is how errors name it.
pub fn parse(text: &str, file: &str) -> Result<Spec, SpecError> {
    let at = |offset: Option<usize>, message: String| {
        let (line, column) = offset.map_or((0, 0), |o| line_column(text, o));
        SpecError {
            file: file.to_owned(),
            line,
            column,
            message,
        }
    };
    let document = DeTable::parse(text).map_err(|error| {
        let message = format!("invalid TOML: {}", error.message().trim());
        at(error.span().map(|s| s.start), message)
    })?;
    let index = Index::build(document.get_ref());
    let mut spec: Spec = toml::from_str(text).map_err(|error| {
        let span = error.span();
        let message = error.message().trim().to_owned();
        let (offset, message) = explain(text, &index, span, &message);
        at(offset, message)
    })?;
    super::version::read_as_written(&mut spec);
    let (mut problems, ready) = check(&spec);
    let compiled = if problems.is_empty() {
        match model_script(&spec, file) {
            Ok(compiled) => compiled,
            Err(problem) => {
                problems.push(problem);
                None
            }
        }
    } else {
        None
    };
    if let Some(problem) = problems.into_iter().next() {
        // Point at the key itself, or at the nearest table that was written.
        let mut path = problem.path.clone();
        let offset = loop {
            if let Some(entry) = index.by_path(&path) {
                break Some(entry.key_span.start);
            }
            if path.pop().is_none() {
                break None;
            }
        };
        return Err(at(offset, problem.message));
    }
    if let Some(model) = spec.model.as_mut() {
        model.compiled = compiled;
    }
    if let (Some(measure), Some((ready, guard))) = (spec.measure.as_mut(), ready) {
        measure.ready = ready;
        measure.ready_guard = guard;
    }
    Ok(spec)
}

/// The largest spec file read (1 MiB): a spec is a page of TOML.
pub(super) const MAX_SPEC_BYTES: u64 = 1 << 20;

/// Reads a spec file: a regular file of at most 1 MiB (a FIFO or a device is
/// refused, not waited on or read without end).
pub fn load(path: &Path) -> Result<Spec, SpecError> {
    let file = path.display().to_string();
    let text =
        bench_core::io::read_input_file(path, MAX_SPEC_BYTES).map_err(|error| SpecError {
            file: file.clone(),
            line: 0,
            column: 0,
            message: format!("cannot read the spec: {error}"),
        })?;
    parse(&text, &file)
}

/// Turns serde's message into one that names the key, and picks where to point.
fn explain(
    text: &str,
    index: &Index,
    span: Option<Range<usize>>,
    message: &str,
) -> (Option<usize>, String) {
    let Some(span) = span else {
        return (None, message.to_owned());
    };
    if let Some(rest) = message.strip_prefix("unknown field ") {
        let names = backticked(rest);
        let unknown = names.first().copied().unwrap_or("");
        let expected = names.get(1..).unwrap_or(&[]);
        let table = index
            .by_key_span(&span)
            .map(|e| table_name(&e.path[..e.path.len() - 1]))
            .unwrap_or_else(|| "this table".to_owned());
        let mut text = format!("unknown key '{unknown}' in {table}");
        if let Some(best) = suggest(unknown, expected) {
            text.push_str(&format!("; did you mean '{best}'?"));
        } else if !expected.is_empty() {
            text.push_str(&format!("; expected one of: {}", expected.join(", ")));
        }
        return (Some(span.start), text);
    }
    if let Some(rest) = message.strip_prefix("missing field ") {
        let missing = backticked(rest).first().copied().unwrap_or("").to_owned();
        // An array of tables and its element share a span: the element is the table.
        let table = index
            .entries
            .iter()
            .filter(|e| e.value_span == span)
            .max_by_key(|e| e.path.len())
            .map(|e| table_name(&e.path))
            .unwrap_or_else(|| "the top level".to_owned());
        let text = if table == "the top level" && SECTIONS.contains(&missing.as_str()) {
            format!("missing required section [{missing}]")
        } else {
            format!("missing required key '{missing}' in {table}")
        };
        return (Some(span.start), text);
    }
    let mut entry = index.by_value_span(&span);
    // toml reports an element's error at its array; a placeholder names the element.
    if let Some(bad) = message
        .split('\'')
        .nth(1)
        .filter(|_| message.contains("placeholder"))
        && let Some(parent) = entry
    {
        let element = index.entries.iter().find(|e| {
            e.path.len() == parent.path.len() + 1
                && e.path.starts_with(&parent.path)
                && text
                    .get(e.value_span.clone())
                    .is_some_and(|source| source.contains(bad))
        });
        entry = element.or(entry);
    }
    let key = entry.map(|e| key_name(&e.path));
    let offset = Some(entry.map_or(span.start, |e| e.value_span.start));
    if let Some(rest) = message.strip_prefix("invalid type: ") {
        let (found, expected) = rest
            .split_once(", expected ")
            .unwrap_or((rest, "another type"));
        let expected = toml_words(expected);
        let found = toml_words(found);
        let text = match key {
            Some(key) => format!("wrong type for key '{key}': expected {expected}, found {found}"),
            None => format!("wrong type: expected {expected}, found {found}"),
        };
        return (offset, text);
    }
    if let Some(rest) = message.strip_prefix("unknown variant ") {
        let names = backticked(rest);
        if let (Some(key), Some(value)) = (&key, names.first()) {
            let expected = names.get(1..).unwrap_or(&[]).join(", ");
            return (
                offset,
                format!("invalid value '{value}' for key '{key}'; expected one of: {expected}"),
            );
        }
    }
    match key {
        Some(key) => (offset, format!("key '{key}': {message}")),
        None => (offset, message.to_owned()),
    }
}

/// Says serde's type names the way TOML does.
fn toml_words(text: &str) -> String {
    let mut text = text
        .replace("a sequence", "an array")
        .replace("sequence", "array")
        .replace("a map", "a table")
        .replace("map", "table");
    for int in ["u8", "u16", "u32", "u64", "i32", "i64", "usize"] {
        if text == int {
            text = "a whole number".to_owned();
        }
    }
    text
}

/// Top-level keys that are tables, so a missing one is called a section.
const SECTIONS: &[&str] = &[
    "source",
    "install",
    "measure",
    "runtime",
    "ui",
    "staircase",
    "disk",
    "workspace",
    "origin",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::template::Placeholder;

    #[test]
    fn compare_noise_floors_name_known_metrics_and_fractions() {
        let spec = |noise: &str| {
            let text = format!("name = \"x\"\n[compare]\nnoise = {{ {noise} }}\n");
            parse(&text, "x.toml")
        };
        let floors = spec("cold = 0.05, rss = 0.1").unwrap().compare.noise;
        assert_eq!(floors.get("cold"), Some(&0.05));
        assert_eq!(floors.get("rss"), Some(&0.1));
        let error = spec("colt = 0.05").unwrap_err().to_string();
        assert!(
            error.starts_with("x.toml:3:11: unknown metric 'colt' in [compare] noise"),
            "{error}"
        );
        let error = spec("cold = 5").unwrap_err().to_string();
        assert!(
            error.contains("cold = 5 is not a fraction in 0..1"),
            "{error}"
        );
        // A slope's threshold is an amount in its unit: 256 KiB per turn.
        let floors = spec("session_growth = 262144").unwrap().compare.noise;
        assert_eq!(floors.get("session_growth"), Some(&262_144.0));
        let error = spec("lag_growth = -0.1").unwrap_err().to_string();
        assert!(
            error.contains("is not an amount of at least 0 in seconds per 100 turns"),
            "{error}"
        );
    }

    #[test]
    fn ready_exit_refuses_sessions_that_must_stay_running() {
        let error = parse(
            "name = \"x\"\n[measure]\ncommand = [\"x\"]\nready = \"exit\"\n[staircase]\n",
            "x.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("[ui] and [staircase] need one"), "{error}");
    }

    #[test]
    fn settle_keys_read_fixed_and_quiet_settles() {
        let settles = |text: &str| {
            let spec = parse(
                &format!("name = \"x\"\n[measure]\ncommand = [\"x\"]\n{text}"),
                "x.toml",
            )
            .unwrap();
            (
                spec.measure.unwrap().settle.0,
                spec.staircase.map(|staircase| staircase.settle.0),
            )
        };
        let fixed = |millis| bench_proc::Settle::Fixed(std::time::Duration::from_millis(millis));
        // No key: the fixed second of before; a duration: exactly that.
        assert_eq!(settles(""), (fixed(1000), None));
        assert_eq!(settles("settle = \"1s\"\n"), (fixed(1000), None));
        assert_eq!(
            settles("settle = \"250ms\"\n[staircase]\nsettle = \"2s\"\n"),
            (fixed(250), Some(fixed(2000)))
        );
        let (measure, staircase) = settles(
            "settle = \"auto\"\n[staircase]\nsettle = { until = \"quiet\", max = \"3s\" }\n",
        );
        assert_eq!(
            measure,
            bench_proc::Settle::Quiet(bench_proc::settle::Quiet::default())
        );
        assert_eq!(
            staircase.map(|settle| settle.max()),
            Some(std::time::Duration::from_secs(3))
        );
    }

    #[test]
    fn the_ready_keys_are_resolved_once_into_bench_terms_mode() {
        let measure = |keys: &str| {
            let text = format!("name = \"x\"\n[measure]\ncommand = [\"x\"]\n{keys}");
            parse(&text, "x.toml").unwrap().measure.unwrap().ready
        };
        assert!(matches!(
            measure("ready = \"pattern\"\nready_pattern = \"^> $\"\n"),
            bench_term::ReadyMode::Pattern(regex) if regex.as_str() == "^> $"
        ));
        assert!(matches!(
            measure("ready = \"stable\"\nready_quiet = \"750ms\"\n"),
            bench_term::ReadyMode::Stable(quiet) if quiet == std::time::Duration::from_millis(750)
        ));
        assert!(matches!(
            measure("ready = \"first-frame\"\n"),
            bench_term::ReadyMode::FirstFrame
        ));
        assert!(matches!(measure(""), bench_term::ReadyMode::Probe));
        // The flag's grammar, read by the flag's parser.
        assert!(matches!(
            measure("ready = \"pattern:>>>.$\"\n"),
            bench_term::ReadyMode::Pattern(regex) if regex.as_str() == ">>>.$"
        ));
        assert!(matches!(
            measure("ready = \"stable:2s\"\n"),
            bench_term::ReadyMode::Stable(quiet) if quiet == std::time::Duration::from_secs(2)
        ));
        for flag in ["probe", "first-frame", "pattern:^> $", "stable:250ms"] {
            let mode: bench_term::ReadyMode = flag.parse().unwrap();
            assert_eq!(
                measure(&format!("ready = \"{flag}\"\n")).to_string(),
                mode.to_string()
            );
        }
        let error = parse(
            "name = \"x\"\n[measure]\ncommand = [\"x\"]\nready = \"redy\"\n",
            "x.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with(
                "x.toml:4:1: invalid value 'redy' for key 'measure.ready': unknown ready mode"
            ),
            "{error}"
        );
        assert!(matches!(
            measure("ready = \"exit\"\n"),
            bench_term::ReadyMode::Exit
        ));
        let guard = parse(
            "name = \"x\"\n[measure]\ncommand = [\"x\"]\nready_require = \"^> $\"\nready_reject = [\"a\", \"b+\"]\nready_allow_dialog = true\n",
            "x.toml",
        )
        .unwrap()
        .measure
        .unwrap()
        .ready_guard;
        assert_eq!(
            guard.require.map(|r| r.as_str().to_owned()).as_deref(),
            Some("^> $")
        );
        let reject: Vec<&str> = guard.reject.iter().map(regex::Regex::as_str).collect();
        assert_eq!(reject, ["a", "b+"]);
        assert!(guard.allow_dialog);
    }

    #[test]
    fn a_name_and_a_measure_make_a_spec_of_an_installed_program() {
        let spec = parse(
            "name = \"py\"\n[measure]\ncommand = [\"python3\"]\n",
            "py.toml",
        )
        .unwrap();
        assert!(spec.source.is_none() && spec.build.is_empty() && spec.artifacts.is_empty());
        assert!(spec.install.command.is_none());
        assert!(spec.install.write.is_empty());
        assert_eq!(spec.install.inventory_file, "installed-dependencies.txt");
        assert!(spec.workspace.create);
    }

    #[test]
    fn home_files_without_an_installer_take_placeholders() {
        let text = "name = \"py\"\nversion = \"1.2\"\n\n[[install.write]]\npath = \"a.json\"\n\
                    content = '{\"w\": \"{json:workspace}\", \"v\": \"{version}\", \"n\": {\"x\": 1}}'\n";
        let spec = parse(text, "py.toml").unwrap();
        let content = &spec.install.write[0].content;
        let used: Vec<Placeholder> = content.placeholders().collect();
        assert_eq!(used, [Placeholder::Workspace, Placeholder::Version]);
        let mut values = crate::spec::Values::default();
        values
            .set(Placeholder::Workspace, "C:\\w \"x\"")
            .set(Placeholder::Version, "1.2");
        let written: serde_json::Value =
            serde_json::from_str(&content.expand(&values).unwrap()).unwrap();
        assert_eq!(
            written,
            serde_json::json!({"w": "C:\\w \"x\"", "v": "1.2", "n": {"x": 1}})
        );
    }

    #[test]
    fn a_home_file_is_private_unless_the_spec_gives_a_mode() {
        let text = "name = \"py\"\n\n[[install.write]]\npath = \"a\"\ncontent = \"x\"\n\
                    [[install.write]]\npath = \"b\"\ncontent = \"x\"\nexecutable = true\n\
                    [[install.write]]\npath = \"c\"\ncontent = \"x\"\nmode = \"0644\"\n";
        let spec = parse(text, "py.toml").unwrap();
        let modes: Vec<u32> = spec.install.write.iter().map(|f| f.file_mode()).collect();
        assert_eq!(modes, [0o600, 0o700, 0o644]);
        for bad in ["4755", "0o644", "", "999", "06444"] {
            let text = format!(
                "name = \"py\"\n[[install.write]]\npath = \"a\"\ncontent = \"x\"\nmode = \"{bad}\"\n"
            );
            let error = parse(&text, "py.toml").unwrap_err();
            assert!(
                bench_core::error_chain(&error).contains("is not an octal string"),
                "{bad}: {}",
                bench_core::error_chain(&error)
            );
        }
    }

    #[test]
    fn an_empty_installer_command_is_refused() {
        let error = parse("name = \"py\"\n[install]\ncommand = []\n", "py.toml").unwrap_err();
        assert!(
            error
                .to_string()
                .contains("'install.command' must name a program"),
            "{error}"
        );
    }

    #[test]
    fn line_and_column_count_characters() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 6), (2, 1));
        assert_eq!(line_column(text, text.find('=').unwrap()), (1, 3));
        let second = text.rfind('=').unwrap();
        assert_eq!(line_column(text, second), (2, 4));
    }

    #[test]
    fn suggestions_are_for_typos_only() {
        let keys = ["command", "cwd", "env", "ready"];
        assert_eq!(suggest("comand", &keys), Some("command"));
        assert_eq!(suggest("raedy", &keys), Some("ready"));
        assert_eq!(suggest("banana", &keys), None);
    }

    #[test]
    fn edit_distance_is_levenshtein() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
