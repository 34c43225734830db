//! Reading a spec: TOML syntax, then the typed structs, then the checks serde cannot
//! make (regexes, zero timeouts, placeholders used where they have no value). Every
//! error is `file:line:column: message` and names the key.

use super::model::Spec;
use super::template::{Placeholder, Template};
use std::collections::BTreeMap;
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

/// One step of a key path: a table key or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Key(String),
    Index(usize),
}

type KeyPath = Vec<Segment>;

/// Renders `measure.ready_pattern`, `build[1].timeout`.
fn key_name(path: &[Segment]) -> String {
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Index(index) => out.push_str(&format!("[{index}]")),
        }
    }
    out
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

/// Whether `text` is a full 40-character hexadecimal commit sha.
pub fn is_full_sha(text: &str) -> bool {
    text.len() == 40 && text.chars().all(|ch| ch.is_ascii_hexdigit())
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

struct Problem {
    path: KeyPath,
    message: String,
}

fn key(parts: &[&str]) -> KeyPath {
    parts
        .iter()
        .map(|p| Segment::Key((*p).to_owned()))
        .collect()
}

fn keyed(base: &[&str], index: usize, rest: &[&str]) -> KeyPath {
    let mut path = key(base);
    path.push(Segment::Index(index));
    path.extend(key(rest));
    path
}

/// Where a template is used decides which placeholders have a value there.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Source, builds, artifacts, versions: no trial user yet.
    Prepare,
    /// The installer: the trial user and the origin.
    Install,
    /// Install checks, measure, runtime, ui, staircase: the trial user.
    Trial,
    /// `[measure] stop_session`: the trial user and the session id.
    StopSession,
    /// `[origin] path`.
    OriginPath,
}

struct Checker<'a> {
    spec: &'a Spec,
    problems: Vec<Problem>,
}

impl Checker<'_> {
    fn problem(&mut self, path: KeyPath, message: impl Into<String>) {
        self.problems.push(Problem {
            path,
            message: message.into(),
        });
    }

    fn template(&mut self, path: KeyPath, template: &Template, stage: Stage) {
        for placeholder in template.placeholders() {
            let name = key_name(&path);
            let allowed = match placeholder {
                Placeholder::Out | Placeholder::Artifacts => stage != Stage::OriginPath,
                Placeholder::Version => true,
                Placeholder::Source | Placeholder::Build => stage != Stage::OriginPath,
                Placeholder::Home | Placeholder::User => {
                    !matches!(stage, Stage::Prepare | Stage::OriginPath)
                }
                Placeholder::Workspace => !matches!(stage, Stage::Prepare | Stage::OriginPath),
                Placeholder::Origin => {
                    stage == Stage::Install
                        || (self.spec.origin.port.is_some() && stage != Stage::OriginPath)
                }
                Placeholder::Id => stage == Stage::StopSession,
                Placeholder::ModelUrl => !matches!(stage, Stage::Prepare | Stage::OriginPath),
            };
            if !allowed {
                let where_ = match placeholder {
                    Placeholder::Origin => {
                        "it is only set while the installer runs ([install] command, cwd and env), unless [origin] port is fixed"
                    }
                    Placeholder::Id => "it is only set in [measure] stop_session",
                    Placeholder::ModelUrl => {
                        "the endpoint belongs to the trials, not to preparing the target"
                    }
                    Placeholder::Home | Placeholder::User | Placeholder::Workspace => {
                        "there is no trial user while the target is prepared"
                    }
                    _ => "it has no value there",
                };
                self.problem(
                    path.clone(),
                    format!("placeholder {placeholder} cannot be used in '{name}': {where_}"),
                );
                continue;
            }
            let missing = match placeholder {
                Placeholder::Source if self.spec.source.is_none() => {
                    Some("the spec has no [source]")
                }
                Placeholder::Build if self.spec.source.is_some() => {
                    Some("the spec has a [source]: builds run in {source}")
                }
                Placeholder::Version if self.spec.version.is_none() => {
                    Some("the spec has no top-level 'version'")
                }
                Placeholder::Workspace if !self.spec.workspace.create => {
                    Some("[workspace] create is false")
                }
                Placeholder::ModelUrl if self.spec.model.is_none() => {
                    Some("the spec has no [model]")
                }
                Placeholder::Origin if !self.serves() => {
                    Some("nothing is served: there are no [[artifacts]] or [origin] serve is false")
                }
                _ => None,
            };
            if let Some(why) = missing {
                self.problem(
                    path.clone(),
                    format!("placeholder {placeholder} in '{name}' has no value: {why}"),
                );
            }
        }
    }

    fn serves(&self) -> bool {
        self.spec.origin.serve && !self.spec.artifacts.is_empty()
    }

    fn command(&mut self, path: KeyPath, command: &[Template], stage: Stage) {
        if command.is_empty() {
            self.problem(
                path.clone(),
                format!("'{}' must name a program", key_name(&path)),
            );
        }
        for (index, argument) in command.iter().enumerate() {
            let mut item = path.clone();
            item.push(Segment::Index(index));
            self.template(item, argument, stage);
        }
    }

    fn env(&mut self, path: KeyPath, env: &BTreeMap<String, Template>, stage: Stage) {
        for (name, value) in env {
            let mut item = path.clone();
            item.push(Segment::Key(name.clone()));
            if name.is_empty() || name.contains('=') || name.contains('\0') {
                self.problem(item.clone(), format!("invalid variable name '{name}'"));
            }
            self.template(item, value, stage);
        }
    }

    fn nonzero(&mut self, path: KeyPath, duration: &bench_core::duration::Duration) {
        if duration.is_zero() {
            self.problem(
                path.clone(),
                format!("'{}' must be longer than zero", key_name(&path)),
            );
        }
    }

    /// Compiles `pattern`, or records why it does not compile.
    fn regex(&mut self, path: KeyPath, pattern: &str) -> Option<regex::Regex> {
        self.compile(path, regex::Regex::new(pattern))
    }

    /// Compiles a pattern that reads the screen at ready ([`bench_term::ready_regex`]:
    /// multi-line), or records why it does not compile.
    fn ready_regex(&mut self, path: KeyPath, pattern: &str) -> Option<regex::Regex> {
        self.compile(path, bench_term::ready_regex(pattern))
    }

    fn compile(
        &mut self,
        path: KeyPath,
        compiled: Result<regex::Regex, regex::Error>,
    ) -> Option<regex::Regex> {
        match compiled {
            Ok(regex) => Some(regex),
            Err(error) => {
                let first = error.to_string();
                let last = first.lines().last().unwrap_or("").trim();
                let first = last.strip_prefix("error: ").unwrap_or(last).to_owned();
                self.problem(
                    path.clone(),
                    format!("invalid regex in '{}': {first}", key_name(&path)),
                );
                None
            }
        }
    }

    fn relative(&mut self, path: KeyPath, value: &str) {
        let candidate = Path::new(value);
        let escapes = candidate
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)));
        if value.is_empty() || escapes {
            self.problem(
                path.clone(),
                format!(
                    "'{}' must be a relative path inside the home without '..' (got \"{value}\")",
                    key_name(&path)
                ),
            );
        }
    }

    fn file_pattern(&mut self, path: KeyPath, pattern: &str) {
        if pattern.is_empty() || pattern.contains('/') {
            self.problem(
                path.clone(),
                format!(
                    "'{}' must be a file-name pattern without '/' (got \"{pattern}\")",
                    key_name(&path)
                ),
            );
        }
    }
}

/// The checks serde cannot make, in document order.
/// The ready keys of `[measure]` as bench-term reads them: the mode and the guard of the
/// screen at ready, each regex compiled once.
/// `measure.ready` as a mode: `"pattern"` and `"stable"` take the keys beside them
/// (`ready_pattern`, `ready_quiet`); any other value is read by the one grammar the
/// `--ready` flag uses (bench-term's `ReadyMode` parser: `probe`, `pattern:REGEX`,
/// `first-frame`, `stable:DURATION`, and whatever it learns), so a spec accepts every form
/// the flag does.
fn ready_mode(
    c: &mut Checker<'_>,
    ready: &str,
    measure: &super::model::Measure,
) -> Option<bench_term::ReadyMode> {
    let pattern_key = || key(&["measure", "ready_pattern"]);
    match (ready, &measure.ready_pattern) {
        ("pattern", Some(pattern)) => c
            .ready_regex(pattern_key(), pattern)
            .map(bench_term::ReadyMode::Pattern),
        ("pattern", None) => {
            c.problem(
                key(&["measure", "ready"]),
                "ready = \"pattern\" needs 'measure.ready_pattern' (or write ready = \"pattern:REGEX\")",
            );
            None
        }
        (_, Some(_)) => {
            c.problem(
                pattern_key(),
                "'measure.ready_pattern' is only used with ready = \"pattern\"",
            );
            None
        }
        ("stable", None) => Some(bench_term::ReadyMode::Stable(measure.ready_quiet.0)),
        (text, None) => match text.parse::<bench_term::ReadyMode>() {
            Ok(mode) => Some(mode),
            Err(error) => {
                c.problem(
                    key(&["measure", "ready"]),
                    format!(
                        "invalid value '{text}' for key 'measure.ready': {error}; or \"pattern\" \
                         with ready_pattern, \"stable\" with ready_quiet"
                    ),
                );
                None
            }
        },
    }
}

type Ready = (bench_term::ReadyMode, bench_term::ReadyGuard);

/// The problems of `spec` in the order of its keys, and its `[measure]` ready keys
/// resolved (`None` without a `[measure]`; meaningless when there are problems).
fn check(spec: &Spec) -> (Vec<Problem>, Option<Ready>) {
    let mut ready = None;
    let mut c = Checker {
        spec,
        problems: Vec::new(),
    };
    if let Some(message) = spec.spec_version.and_then(super::version::unknown_version) {
        c.problem(key(&["spec_version"]), message);
    }
    if spec.name.trim().is_empty() {
        c.problem(key(&["name"]), "'name' must not be empty");
    }
    if let Some(source) = &spec.source {
        let commit = &source.commit;
        if commit.starts_with("@DEMO_") {
            // The demo's template, edited: `clibench run` fills in only the shipped one.
            c.problem(
                key(&["source", "commit"]),
                format!(
                    "'source.commit' is the built-in demo's placeholder \"{commit}\", which \
                     clibench fills in only for the demo as shipped: `clibench run` (no spec) or \
                     `clibench run examples/demo-agent/demo.toml` runs it; for a copy of your \
                     own, write a repository and a full 40-character commit sha"
                ),
            );
        } else if !is_full_sha(commit) {
            c.problem(
                key(&["source", "commit"]),
                format!(
                    "'source.commit' must be a full 40-character commit sha (got \"{commit}\")"
                ),
            );
        }
        if source.repository.trim().is_empty() {
            c.problem(
                key(&["source", "repository"]),
                "'source.repository' must not be empty",
            );
        }
    }
    c.env(key(&["env"]), &spec.env, Stage::Trial);
    for (index, name) in spec.pass_env.iter().enumerate() {
        if name.is_empty() || name.contains('=') || name.contains('\0') {
            c.problem(
                keyed(&["pass_env"], index, &[]),
                format!("invalid variable name '{name}' in 'pass_env'"),
            );
        }
    }
    for (name, command) in &spec.versions {
        c.command(key(&["versions", name]), command, Stage::Prepare);
    }
    for (index, step) in spec.build.iter().enumerate() {
        let at = |rest: &[&str]| keyed(&["build"], index, rest);
        c.command(at(&["command"]), &step.command, Stage::Prepare);
        if let Some(cwd) = &step.cwd {
            c.template(at(&["cwd"]), cwd, Stage::Prepare);
        }
        c.nonzero(at(&["timeout"]), &step.timeout);
        c.env(at(&["env"]), &step.env, Stage::Prepare);
        for (item, path) in step.when_exists.iter().enumerate() {
            c.template(
                keyed(&["build"], index, &["when_exists"])
                    .into_iter()
                    .chain([Segment::Index(item)])
                    .collect(),
                path,
                Stage::Prepare,
            );
        }
    }
    for (index, set) in spec.artifacts.iter().enumerate() {
        c.template(
            keyed(&["artifacts"], index, &["folder"]),
            &set.folder,
            Stage::Prepare,
        );
        c.file_pattern(keyed(&["artifacts"], index, &["glob"]), &set.glob);
    }
    c.template(
        key(&["origin", "path"]),
        &spec.origin.path,
        Stage::OriginPath,
    );
    if spec.origin.port == Some(0) {
        c.problem(
            key(&["origin", "port"]),
            "'origin.port' must be a port number (leave it out for an ephemeral port)",
        );
    }
    if !spec.origin.path.raw().starts_with('/') {
        c.problem(
            key(&["origin", "path"]),
            "'origin.path' must start with '/'",
        );
    }

    let install = &spec.install;
    if let Some(command) = &install.command {
        c.command(key(&["install", "command"]), command, Stage::Install);
    }
    if let Some(cwd) = &install.cwd {
        c.template(key(&["install", "cwd"]), cwd, Stage::Install);
    }
    c.nonzero(key(&["install", "timeout"]), &install.timeout);
    c.env(key(&["install", "env"]), &install.env, Stage::Install);
    if let Some(command) = &install.version_command {
        c.command(key(&["install", "version_command"]), command, Stage::Trial);
    }
    match (&install.version_contains, &install.version_command) {
        (Some(text), Some(_)) => {
            c.template(key(&["install", "version_contains"]), text, Stage::Trial)
        }
        (Some(_), None) => c.problem(
            key(&["install", "version_contains"]),
            "'install.version_contains' needs 'install.version_command'",
        ),
        _ => {}
    }
    for (index, file) in install.files.iter().enumerate() {
        c.template(keyed(&["install", "files"], index, &[]), file, Stage::Trial);
    }
    if let Some(executable) = &install.executable {
        c.template(key(&["install", "executable"]), executable, Stage::Trial);
    }
    if let Some(pattern) = &install.compiled_if_artifact {
        c.file_pattern(key(&["install", "compiled_if_artifact"]), pattern);
        if install.executable.is_none() {
            c.problem(
                key(&["install", "compiled_if_artifact"]),
                "'install.compiled_if_artifact' needs 'install.executable'",
            );
        }
    }
    if let Some(command) = &install.inventory {
        c.command(key(&["install", "inventory"]), command, Stage::Trial);
    }
    c.relative(key(&["install", "inventory_file"]), &install.inventory_file);
    for (index, file) in install.write.iter().enumerate() {
        c.relative(keyed(&["install", "write"], index, &["path"]), &file.path);
        c.template(
            keyed(&["install", "write"], index, &["content"]),
            &file.content,
            Stage::Trial,
        );
    }

    if spec.workspace.create {
        c.relative(key(&["workspace", "path"]), &spec.workspace.path);
        for name in spec.workspace.files.keys() {
            c.relative(key(&["workspace", "files", name]), name);
        }
    }

    if let Some(measure) = &spec.measure {
        c.command(key(&["measure", "command"]), &measure.command, Stage::Trial);
        if let Some(cwd) = &measure.cwd {
            c.template(key(&["measure", "cwd"]), cwd, Stage::Trial);
        }
        c.env(key(&["measure", "env"]), &measure.env, Stage::Trial);
        let mode = ready_mode(&mut c, &measure.ready_key, measure);
        // A program that is ready when it exits has no session to drive or to stack.
        if matches!(mode, Some(bench_term::ReadyMode::Exit))
            && (spec.ui.is_some() || spec.staircase.is_some())
        {
            c.problem(
                key(&["measure", "ready"]),
                "ready = \"exit\" times a program that exits; [ui] and [staircase] need one \
                 that stays running",
            );
        }
        let require = measure
            .ready_require
            .as_ref()
            .and_then(|pattern| c.ready_regex(key(&["measure", "ready_require"]), pattern));
        let reject = measure
            .ready_reject
            .iter()
            .enumerate()
            .filter_map(|(index, pattern)| {
                c.ready_regex(keyed(&["measure", "ready_reject"], index, &[]), pattern)
            })
            .collect();
        let guard = bench_term::ReadyGuard {
            require,
            reject,
            allow_dialog: measure.ready_allow_dialog,
            expected: Vec::new(),
        };
        ready = mode.map(|mode| (mode, guard));
        if let Err(error) = bench_term::parse_keys(&measure.quit) {
            c.problem(
                key(&["measure", "quit"]),
                format!("'measure.quit': {error}"),
            );
        }
        c.nonzero(key(&["measure", "ready_quiet"]), &measure.ready_quiet);
        c.nonzero(key(&["measure", "ready_timeout"]), &measure.ready_timeout);
        c.nonzero(
            key(&["measure", "command_timeout"]),
            &measure.command_timeout,
        );
        if measure.cols == 0 || measure.rows == 0 {
            c.problem(
                key(&["measure", "cols"]),
                "'measure.cols' and 'measure.rows' must be at least 1",
            );
        }
        match (&measure.list_sessions, &measure.stop_session) {
            (Some(list), Some(stop)) => {
                c.command(key(&["measure", "list_sessions"]), list, Stage::Trial);
                c.command(key(&["measure", "stop_session"]), stop, Stage::StopSession);
                if !stop
                    .iter()
                    .any(|a| a.placeholders().any(|p| p == Placeholder::Id))
                {
                    c.problem(
                        key(&["measure", "stop_session"]),
                        "'measure.stop_session' must pass the session with {id}",
                    );
                }
            }
            (Some(_), None) => c.problem(
                key(&["measure", "list_sessions"]),
                "'measure.list_sessions' needs 'measure.stop_session'",
            ),
            (None, Some(_)) => c.problem(
                key(&["measure", "stop_session"]),
                "'measure.stop_session' needs 'measure.list_sessions'",
            ),
            (None, None) => {}
        }
    }
    if let Some(runtime) = &spec.runtime {
        c.command(key(&["runtime", "command"]), &runtime.command, Stage::Trial);
        if let Some(cwd) = &runtime.cwd {
            c.template(key(&["runtime", "cwd"]), cwd, Stage::Trial);
        }
        c.env(key(&["runtime", "env"]), &runtime.env, Stage::Trial);
        c.nonzero(key(&["runtime", "timeout"]), &runtime.timeout);
    }
    if let Some(ui) = &spec.ui {
        match &ui.command {
            Some(command) => c.command(key(&["ui", "command"]), command, Stage::Trial),
            None if spec.measure.is_none() => c.problem(
                key(&["ui"]),
                "[ui] needs a 'command' or a [measure] section to take it from",
            ),
            None => {}
        }
        if let Some(cwd) = &ui.cwd {
            c.template(key(&["ui", "cwd"]), cwd, Stage::Trial);
        }
        c.env(key(&["ui", "env"]), &ui.env, Stage::Trial);
        let mut names = Vec::new();
        for (index, step) in ui.steps.iter().enumerate() {
            if step.name.trim().is_empty() {
                c.problem(
                    keyed(&["ui", "steps"], index, &["name"]),
                    "a ui step needs a name",
                );
            } else if names.contains(&step.name) {
                c.problem(
                    keyed(&["ui", "steps"], index, &["name"]),
                    format!("ui step name '{}' is used twice", step.name),
                );
            }
            names.push(step.name.clone());
            c.regex(keyed(&["ui", "steps"], index, &["expect"]), &step.expect);
            c.nonzero(keyed(&["ui", "steps"], index, &["timeout"]), &step.timeout);
        }
    }
    for (metric, fraction) in &spec.compare.noise {
        let path = key(&["compare", "noise", metric]);
        match metric.parse::<bench_core::Metric>() {
            Err(_) => c.problem(
                path,
                format!(
                    "unknown metric '{metric}' in [compare] noise (`clibench report --explain` lists them)"
                ),
            ),
            Ok(known) if !bench_core::thresholds::is_valid(known, *fraction) => c.problem(
                path,
                format!(
                    "[compare] noise {metric} = {fraction} is not {}",
                    bench_core::thresholds::expected(known)
                ),
            ),
            Ok(_) => {}
        }
    }
    for (index, metric) in spec.compare.watch.iter().flatten().enumerate() {
        if metric.parse::<bench_core::Metric>().is_err() {
            c.problem(
                keyed(&["compare", "watch"], index, &[]),
                format!(
                    "unknown metric '{metric}' in [compare] watch (`clibench report --explain` lists them)"
                ),
            );
        }
    }
    if let Some(target) = spec.compare.target_mde
        && !(target > 0.0 && target < 1.0)
    {
        c.problem(
            key(&["compare", "target_mde"]),
            format!("[compare] target_mde = {target} is outside 0..1 (0.05 means ±5%)"),
        );
    }
    if let Some(staircase) = &spec.staircase {
        match &staircase.command {
            Some(command) => c.command(key(&["staircase", "command"]), command, Stage::Trial),
            None if spec.measure.is_none() => c.problem(
                key(&["staircase"]),
                "[staircase] needs a 'command' or a [measure] section to take it from",
            ),
            None => {}
        }
        if let Some(cwd) = &staircase.cwd {
            c.template(key(&["staircase", "cwd"]), cwd, Stage::Trial);
        }
        c.env(key(&["staircase", "env"]), &staircase.env, Stage::Trial);
        if staircase.count == 0 {
            c.problem(
                key(&["staircase", "count"]),
                "'staircase.count' must be at least 1",
            );
        }
        if staircase.session && spec.model.is_none() {
            c.problem(
                key(&["staircase", "session"]),
                "[staircase] session = true needs [model]: each instance types the script's first prompt",
            );
        }
    }
    if let Some(session) = &spec.session {
        if spec.model.is_none() {
            c.problem(
                key(&["session"]),
                "[session] needs [model]: the turns are the model's script",
            );
        }
        if spec.measure.is_none() {
            c.problem(
                key(&["session"]),
                "[session] needs [measure] (the ready mode, size and quit keys)",
            );
        } else if matches!(
            ready.as_ref().map(|r| &r.0),
            Some(bench_term::ReadyMode::Exit)
        ) {
            c.problem(
                key(&["measure", "ready"]),
                "ready = \"exit\" times a program that exits; [session] needs one that stays running",
            );
        }
        if let Some(command) = &session.command {
            c.command(key(&["session", "command"]), command, Stage::Trial);
        }
        if let Some(cwd) = &session.cwd {
            c.template(key(&["session", "cwd"]), cwd, Stage::Trial);
        }
        c.env(key(&["session", "env"]), &session.env, Stage::Trial);
        c.nonzero(key(&["session", "idle"]), &session.idle);
        c.nonzero(key(&["session", "turn_timeout"]), &session.turn_timeout);
        if session.typing_turn == Some(0) {
            c.problem(
                key(&["session", "typing_turn"]),
                "'session.typing_turn' counts the turns from 1",
            );
        }
        if session.typing_keys > 100 {
            c.problem(
                key(&["session", "typing_keys"]),
                "'session.typing_keys' is at most 100",
            );
        }
        if let Some(pattern) = &session.turn_done {
            c.regex(key(&["session", "turn_done"]), pattern);
        }
        if session
            .turns
            .is_some_and(|turns| turns == 0 || turns as usize > bench_core::detail::MAX_TURNS)
        {
            c.problem(
                key(&["session", "turns"]),
                "'session.turns' is from 1 to 1000",
            );
        }
        if session.pastes.len() > bench_core::detail::MAX_PASTES
            || session
                .pastes
                .iter()
                .any(|&bytes| bytes == 0 || bytes > bench_core::detail::MAX_PASTE_BYTES)
        {
            c.problem(
                key(&["session", "pastes"]),
                "'session.pastes' is at most 10 sizes, each from 1 to 4194304 bytes",
            );
        }
        if !session.pastes.is_empty() && session.paste_clear.is_empty() {
            c.problem(
                key(&["session", "paste_clear"]),
                "'session.paste_clear' must name the keys that empty the input after a paste",
            );
        }
        if session.checkpoint_keys == 0
            || session.checkpoint_keys as usize > bench_core::detail::MAX_CHECKPOINT_KEYS
        {
            c.problem(
                key(&["session", "checkpoint_keys"]),
                "'session.checkpoint_keys' is from 1 to 20",
            );
        }
    }
    (c.problems, ready)
}

/// Reads `[model] script` (a file relative to the spec's folder, or inline), patches its
/// physics with `[model] physics`, checks it, and for `[session]` checks that its turns
/// have prompts. The problem's key and message, or the compiled script.
fn model_script(spec: &Spec, spec_file: &str) -> Result<Option<bench_model::Compiled>, Problem> {
    let Some(model) = &spec.model else {
        return Ok(None);
    };
    let problem = |path: KeyPath, message: String| Problem { path, message };
    let mut script = match &model.script {
        super::model::ScriptSource::Inline(script) => script.clone(),
        super::model::ScriptSource::File(file) => {
            let folder = Path::new(spec_file).parent().unwrap_or(Path::new(""));
            let path = folder.join(file);
            bench_model::Script::load(&path).map_err(|error| {
                problem(
                    key(&["model", "script"]),
                    format!("'model.script': {}", bench_core::error_chain(&error)),
                )
            })?
        }
    };
    if let Some(patch) = &model.physics {
        script.physics = script.physics.patched(patch);
    }

    let compiled = script.compile().map_err(|error| {
        let path = if model.physics.is_some() && error.to_string().starts_with("physics.") {
            key(&["model", "physics"])
        } else {
            key(&["model", "script"])
        };
        problem(path, format!("'model.script': {error}"))
    })?;
    let compiled = match spec.session.as_ref().and_then(|s| s.turns) {
        Some(turns) => super::long_session::unroll(&compiled, turns as usize),
        None => compiled,
    };
    let prompts = compiled.turns.iter().filter(|t| t.prompt.is_some()).count();
    if prompts == 0 && spec.staircase.as_ref().is_some_and(|s| s.session) {
        return Err(problem(
            key(&["staircase", "session"]),
            "'model.script': no turn has a `prompt` (turns[N].prompt: what a person types), \
             so [staircase] session = true has nothing to type"
                .to_owned(),
        ));
    }
    if let Some(session) = &spec.session {
        if prompts == 0 {
            return Err(problem(
                key(&["model", "script"]),
                "'model.script': no turn has a `prompt` (turns[N].prompt: what a person types), \
                 so [session] has nothing to type"
                    .to_owned(),
            ));
        }
        if let Some(turn) = session.typing_turn
            && turn as usize > prompts
        {
            return Err(problem(
                key(&["session", "typing_turn"]),
                format!(
                    "'session.typing_turn' = {turn}, but the script has {prompts} turn(s) with a prompt"
                ),
            ));
        }
    }
    Ok(Some(compiled))
}

#[cfg(test)]
mod tests {
    use super::*;

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
