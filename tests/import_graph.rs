//! The import graph of each crate has no cycle between its modules, and bench-cli's
//! pipeline keeps its rooms apart.
//!
//! A cycle (a module that uses one that uses it back, directly or through others) means
//! neither can be read, tested or moved without the other: what they share belongs in a
//! module both use. `cargo test -p clibench-examples --test import_graph` names every cycle it finds.
//!
//! Two rules of the house hold on the same edges ([`RULES`]), each broken import named
//! with its file: a pipeline phase never uses another phase (`pipeline/phases/X`, its
//! folder included, never reaches `pipeline/phases/Y`, whether as
//! `crate::pipeline::phases::Y`, `super::Y` or a re-export of Y's items): what two phases
//! share lives in a room both use, such as `pipeline/program/`; and nothing under
//! `pipeline/` uses `standalone`, the standalone commands' layer above it.
//!
//! # Granularity
//! Every module is a node: each `.rs` file is one, and a folder is its `mod.rs`. Module
//! files are found by following `mod NAME;` from `lib.rs` and `main.rs`, so the binary's
//! modules form their own graph beside the library's. An edge `a -> b` is a path in `a`'s
//! code that names `b` or an item of `b` (`use crate::x::b::Item`, `super::b::f()`,
//! `crate::x::b::Item` inline). Two things are wiring, not edges:
//! - a folder's `mod.rs` declaring and re-exporting its children (`pub use child::Item`);
//! - a path through such a re-export (`super::Item`, `crate::x::Item`): it is followed to
//!   the module that defines the item, so the edge goes there.
//!
//! Sibling files are nodes of their own: a file that uses a sibling that uses it back is
//! a cycle, as two folders would be. Test code (`#[cfg(test)] mod tests`, at the end of
//! a file, as the workspace writes it) is left out: a test may use anything.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Cycles known and kept, each with why: the modules of one cycle, in any order. None
/// today; a cycle added here must say why it cannot be broken.
const KNOWN: &[(&[&str], &str)] = &[];

/// Which rooms of a crate stay apart.
enum Rule {
    /// No child of this module (with everything below it) uses another child.
    ChildrenApart {
        parent: &'static str,
        why: &'static str,
    },
    /// Nothing in or below `from` uses anything in or below `to`.
    Below {
        from: &'static str,
        to: &'static str,
        why: &'static str,
    },
}

/// The rules each crate target keeps, by its name in [`targets`].
const RULES: &[(&str, Rule)] = &[
    (
        "bench-cli (lib.rs)",
        Rule::ChildrenApart {
            parent: "pipeline::phases",
            why: "a phase never uses another phase: what two share lives in a room both use \
                  (pipeline/program/, pipeline/out/, ...)",
        },
    ),
    (
        "bench-cli (lib.rs)",
        Rule::Below {
            from: "pipeline",
            to: "standalone",
            why: "the pipeline sits below the standalone commands: what both need lives in \
                  the pipeline or a library crate",
        },
    ),
];

/// A module's path inside its crate (`pipeline::phases::measure`), `""` for the root.
type ModulePath = Vec<String>;

/// One crate target's modules: each module's file, and its text without test code.
struct Crate {
    name: String,
    files: BTreeMap<ModulePath, (PathBuf, String)>,
}

/// The text before the file's test module, and with its comments removed.
fn code_of(text: &str) -> String {
    let mut code = String::new();
    let lines: Vec<&str> = text.lines().collect();
    for (index, line) in lines.iter().enumerate() {
        let next = lines.get(index + 1).map_or("", |l| l.trim());
        if line.trim() == "#[cfg(test)]" && next.starts_with("mod tests {") {
            break;
        }
        let line = match line.find("//") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        };
        code.push_str(line);
        code.push('\n');
    }
    code
}

/// The modules a file declares with `mod NAME;` (not test modules).
fn declared(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut after_test_cfg = false;
    for line in text.lines() {
        let line = line.trim();
        if line == "#[cfg(test)]" {
            after_test_cfg = true;
            continue;
        }
        let rest = line
            .strip_prefix("pub ")
            .or_else(|| line.strip_prefix("pub(crate) "))
            .or_else(|| line.strip_prefix("pub(super) "))
            .unwrap_or(line);
        if let Some(name) = rest.strip_prefix("mod ").and_then(|r| r.strip_suffix(';'))
            && !after_test_cfg
        {
            names.push(name.trim().to_string());
        }
        if !line.starts_with("#[") {
            after_test_cfg = false;
        }
    }
    names
}

/// The crate whose root file is `root`, its modules found by following `mod` lines.
fn load(name: &str, root: &Path) -> Crate {
    let mut files = BTreeMap::new();
    let mut queue = vec![(ModulePath::new(), root.to_path_buf())];
    while let Some((module, file)) = queue.pop() {
        let text = std::fs::read_to_string(&file).unwrap();
        let folder = match file.file_name().and_then(|n| n.to_str()) {
            Some("lib.rs" | "main.rs" | "mod.rs") => file.parent().unwrap().to_path_buf(),
            _ => file.with_extension(""),
        };
        for child in declared(&text) {
            let mut path = module.clone();
            path.push(child.clone());
            let flat = folder.join(format!("{child}.rs"));
            let nested = folder.join(&child).join("mod.rs");
            let found = if flat.is_file() { flat } else { nested };
            assert!(
                found.is_file(),
                "{}: mod {child} has no file",
                file.display()
            );
            queue.push((path, found));
        }
        files.insert(module, (file, code_of(&text)));
    }
    Crate {
        name: name.to_string(),
        files,
    }
}

/// Every path in `code` that starts at `crate`, `super` or `self`, as its segments, with
/// `use` lists (`use super::{a::B, c}`) expanded.
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let starts_word = at == 0
            || !(bytes[at - 1].is_ascii_alphanumeric()
                || bytes[at - 1] == b'_'
                || bytes[at - 1] == b':');
        let head = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|head| bytes[at..].starts_with(head.as_bytes()));
        match head {
            Some(_) if starts_word => {
                let (list, used) = expand(&code[at..]);
                found.extend(list);
                at += used.max(1);
            }
            _ => at += 1,
        }
    }
    found
}

/// The paths written at the start of `text` (a path, or a path ending in a `{...}` list),
/// and how many bytes they took.
fn expand(text: &str) -> (Vec<Vec<String>>, usize) {
    let mut segments = Vec::new();
    let mut at = 0;
    let bytes = text.as_bytes();
    loop {
        let start = at;
        while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
            at += 1;
        }
        if at > start {
            segments.push(text[start..at].to_string());
        }
        if bytes[at..].starts_with(b"::{") {
            // A list: each item is a path of its own after the prefix.
            at += 3;
            let mut all = Vec::new();
            loop {
                while at < bytes.len() && (bytes[at].is_ascii_whitespace() || bytes[at] == b',') {
                    at += 1;
                }
                if at >= bytes.len() || bytes[at] == b'}' {
                    return (all, at + 1);
                }
                let (inner, used) = expand(&text[at..]);
                for path in inner {
                    let mut full = segments.clone();
                    full.extend(path);
                    all.push(full);
                }
                at += used.max(1);
            }
        } else if bytes[at..].starts_with(b"::") {
            at += 2;
        } else {
            // `self` inside a list names the prefix itself; `as` renames change nothing.
            if segments.last().is_some_and(|s| s == "self") && segments.len() > 1 {
                segments.pop();
            }
            return (vec![segments], at);
        }
    }
}

impl Crate {
    /// The module `path` names from `module` (`crate`/`super`/`self` resolved), and the
    /// item after it when there is one.
    fn resolve(
        &self,
        module: &ModulePath,
        path: &[String],
    ) -> Option<(ModulePath, Option<String>)> {
        let mut current = module.clone();
        let mut rest = path;
        match rest.first().map(String::as_str) {
            Some("crate") => current.clear(),
            Some("self") => {}
            Some("super") => {
                while rest.first().is_some_and(|s| s == "super") {
                    current.pop()?;
                    rest = &rest[1..];
                }
                return self.walk(current, rest);
            }
            _ => return None,
        }
        self.walk(current, &rest[1..])
    }

    fn walk(
        &self,
        mut current: ModulePath,
        rest: &[String],
    ) -> Option<(ModulePath, Option<String>)> {
        let mut rest = rest;
        while let Some(next) = rest.first() {
            let mut child = current.clone();
            child.push(next.clone());
            if !self.files.contains_key(&child) {
                break;
            }
            current = child;
            rest = &rest[1..];
        }
        Some((current, rest.first().cloned()))
    }

    /// The child module that `module`'s re-exports take `item` from, when they do.
    fn reexported(&self, module: &ModulePath, item: &str) -> Option<ModulePath> {
        let (_, code) = self.files.get(module)?;
        for statement in code.split(';') {
            let statement = statement.trim();
            let Some(used) = ["pub use ", "pub(crate) use ", "pub(super) use "]
                .into_iter()
                .find_map(|head| statement.strip_prefix(head))
            else {
                continue;
            };
            let used = if used.starts_with("crate::")
                || used.starts_with("super::")
                || used.starts_with("self::")
            {
                used.to_string()
            } else {
                format!("self::{used}")
            };
            for path in expand(&used).0 {
                if path.last().is_some_and(|last| last == item)
                    && let Some((target, _)) = self.resolve(module, &path[..path.len() - 1])
                    && target != *module
                {
                    return Some(target);
                }
            }
        }
        None
    }

    /// The module that defines what `path` names, following re-exports.
    fn defining(&self, module: &ModulePath, path: &[String]) -> Option<ModulePath> {
        let (mut target, mut item) = self.resolve(module, path)?;
        for _ in 0..8 {
            let Some(name) = &item else { break };
            let Some(source) = self.reexported(&target, name) else {
                break;
            };
            target = source;
            item = Some(name.clone());
        }
        Some(target)
    }

    /// The paths of `use child::...` lines (a path relative to `module`, without
    /// `self::`), as `self::child::...`; a folder's `pub use` lines are its wiring.
    fn child_uses(&self, module: &ModulePath, code: &str) -> Vec<Vec<String>> {
        let mut found = Vec::new();
        for statement in code.split(';') {
            let Some(used) = statement.trim().strip_prefix("use ") else {
                continue;
            };
            let first = used.split("::").next().unwrap_or("").trim().to_string();
            let mut child = module.clone();
            child.push(first);
            if self.files.contains_key(&child) {
                found.extend(expand(&format!("self::{used}")).0);
            }
        }
        found
    }

    /// Every path a module writes that names another module, wiring left out: the
    /// module, the path as written (lists expanded), and the module that defines what it
    /// names.
    fn imports(&self) -> Vec<(ModulePath, String, ModulePath)> {
        let mut found = Vec::new();
        for (module, (_, code)) in &self.files {
            let is_folder = self
                .files
                .keys()
                .any(|other| other.len() == module.len() + 1 && other.starts_with(module));
            for path in paths(code).into_iter().chain(self.child_uses(module, code)) {
                let Some(target) = self.defining(module, &path) else {
                    continue;
                };
                // A folder's own children are its wiring: `mod` and `pub use` lines.
                let wiring = is_folder && target.starts_with(module) && is_reexport(code, &path);
                if target != *module && !wiring {
                    found.push((module.clone(), path.join("::"), target));
                }
            }
        }
        found
    }

    /// Every edge `a -> b` between two modules, wiring left out.
    fn edges(&self) -> BTreeMap<ModulePath, BTreeSet<ModulePath>> {
        let mut edges: BTreeMap<ModulePath, BTreeSet<ModulePath>> = BTreeMap::new();
        for (module, _, target) in self.imports() {
            edges.entry(module).or_default().insert(target);
        }
        edges
    }

    /// `module`'s file, from the workspace's root when it is inside it.
    fn file_of(&self, module: &ModulePath) -> String {
        let file = &self.files[module].0;
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        file.strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string()
    }

    /// Each import that breaks `rule`, as `file: `path` reaches MODULE: why`.
    fn broken(&self, rule: &Rule) -> Vec<String> {
        let module = |text: &str| -> ModulePath { text.split("::").map(String::from).collect() };
        // A rule about a module the crate no longer has would hold for nothing.
        let named = match rule {
            Rule::ChildrenApart { parent, .. } => vec![*parent],
            Rule::Below { from, to, .. } => vec![*from, *to],
        };
        let mut found: Vec<String> = named
            .into_iter()
            .filter(|name| !self.files.contains_key(&module(name)))
            .map(|name| format!("{}: a rule names {name}, which it has no longer", self.name))
            .collect();
        for (from, written, to) in self.imports() {
            let why = match rule {
                Rule::ChildrenApart { parent, why } => {
                    let parent = module(parent);
                    let child = |m: &ModulePath| {
                        (m.len() > parent.len() && m.starts_with(&parent))
                            .then(|| m[parent.len()].clone())
                    };
                    match (child(&from), child(&to)) {
                        (Some(a), Some(b)) if a != b => why,
                        _ => continue,
                    }
                }
                Rule::Below {
                    from: below,
                    to: above,
                    why,
                } => {
                    if from.starts_with(&module(below)) && to.starts_with(&module(above)) {
                        why
                    } else {
                        continue;
                    }
                }
            };
            found.push(format!(
                "{}: `{written}` reaches {}: {why}",
                self.file_of(&from),
                name(&to)
            ));
        }
        // A path written twice in one file is one import.
        found.sort();
        found.dedup();
        found
    }
}

/// Whether `path` appears in `code` only as a `pub use` re-export.
fn is_reexport(code: &str, path: &[String]) -> bool {
    let text = path.join("::");
    code.split(';').all(|statement| {
        let statement = statement.trim();
        !statement.contains(&text) || statement.starts_with("pub")
    }) || code.contains(&format!("pub use {text}"))
}

fn name(module: &ModulePath) -> String {
    if module.is_empty() {
        "crate".into()
    } else {
        module.join("::")
    }
}

/// The strongly connected components of more than one module (Tarjan's algorithm).
fn cycles(edges: &BTreeMap<ModulePath, BTreeSet<ModulePath>>) -> Vec<Vec<ModulePath>> {
    struct State<'a> {
        edges: &'a BTreeMap<ModulePath, BTreeSet<ModulePath>>,
        index: BTreeMap<&'a ModulePath, usize>,
        low: BTreeMap<&'a ModulePath, usize>,
        stack: Vec<&'a ModulePath>,
        on_stack: BTreeSet<&'a ModulePath>,
        found: Vec<Vec<ModulePath>>,
    }
    fn visit<'a>(state: &mut State<'a>, node: &'a ModulePath) {
        let next = state.index.len();
        state.index.insert(node, next);
        state.low.insert(node, next);
        state.stack.push(node);
        state.on_stack.insert(node);
        let edges = state.edges;
        for target in edges.get(node).into_iter().flatten() {
            if !state.index.contains_key(target) {
                visit(state, target);
                let low = state.low[target].min(state.low[node]);
                state.low.insert(node, low);
            } else if state.on_stack.contains(target) {
                let low = state.index[target].min(state.low[node]);
                state.low.insert(node, low);
            }
        }
        if state.low[node] == state.index[node] {
            let mut component = Vec::new();
            while let Some(top) = state.stack.pop() {
                state.on_stack.remove(top);
                component.push(top.clone());
                if top == node {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                state.found.push(component);
            }
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in edges.keys() {
        if !state.index.contains_key(node) {
            visit(&mut state, node);
        }
    }
    state.found
}

/// One cycle through `component`'s first module, as `a -> b -> a`, for the message.
fn one_cycle(
    edges: &BTreeMap<ModulePath, BTreeSet<ModulePath>>,
    component: &[ModulePath],
) -> String {
    let members: BTreeSet<&ModulePath> = component.iter().collect();
    let start = &component[0];
    // Breadth-first from the start back to it, inside the component.
    let mut came_from: BTreeMap<&ModulePath, &ModulePath> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for target in edges.get(node).into_iter().flatten() {
            if !members.contains(target) {
                continue;
            }
            if target == start {
                let mut path = vec![name(start)];
                let mut at = node;
                while at != start {
                    path.push(name(at));
                    at = came_from[at];
                }
                path.push(name(start));
                path.reverse();
                return path.join(" -> ");
            }
            if !came_from.contains_key(target) {
                came_from.insert(target, node);
                queue.push_back(target);
            }
        }
    }
    component.iter().map(name).collect::<Vec<_>>().join(", ")
}

/// Every crate target of the workspace: each library and binary root.
fn targets() -> Vec<Crate> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates");
    let mut found = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&crates)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    dirs.sort();
    for dir in dirs {
        let package = dir.file_name().unwrap().to_string_lossy().into_owned();
        for root in ["lib.rs", "main.rs"] {
            let path = dir.join("src").join(root);
            if path.is_file() {
                found.push(load(&format!("{package} ({root})"), &path));
            }
        }
    }
    found
}

#[test]
fn no_crate_has_a_cycle_between_its_modules() {
    let mut problems = Vec::new();
    let mut known_seen = BTreeSet::new();
    for krate in targets() {
        let edges = krate.edges();
        for component in cycles(&edges) {
            let names: BTreeSet<String> = component.iter().map(name).collect();
            let known = KNOWN.iter().position(|(modules, _)| {
                modules
                    .iter()
                    .map(|m| m.to_string())
                    .collect::<BTreeSet<_>>()
                    == names
            });
            match known {
                Some(index) => {
                    known_seen.insert(index);
                }
                None => problems.push(format!("{}: {}", krate.name, one_cycle(&edges, &component))),
            }
        }
    }
    for (index, (modules, _)) in KNOWN.iter().enumerate() {
        if !known_seen.contains(&index) {
            problems.push(format!(
                "known cycle {modules:?} is gone: take it off the list"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "cycles between modules:\n{}",
        problems.join("\n")
    );
}

#[test]
fn no_phase_uses_another_and_the_pipeline_never_uses_standalone() {
    let krates = targets();
    let mut problems = Vec::new();
    for (target, rule) in RULES {
        let Some(krate) = krates.iter().find(|k| k.name == *target) else {
            problems.push(format!(
                "a rule names the crate target {target}, which is gone"
            ));
            continue;
        };
        problems.extend(krate.broken(rule));
    }
    assert!(
        problems.is_empty(),
        "imports across rooms that stay apart:\n{}",
        problems.join("\n")
    );
}

#[test]
fn a_phase_reaching_another_or_standalone_is_named_with_its_file() {
    // A fixture crate: phase `a` uses phase `b` through `super::`, `b`'s folder uses `a`
    // through `crate::` and its own module through `super::`, and program/ uses
    // standalone; phase `a` using program/ and standalone using the pipeline are fine.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let write = |path: &str, text: &str| {
        let path = src.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "mod pipeline;\nmod standalone;\n");
    write("pipeline/mod.rs", "mod phases;\nmod program;\n");
    write("pipeline/phases/mod.rs", "mod a;\nmod b;\n");
    write(
        "pipeline/phases/a.rs",
        "use super::b::B;\nuse crate::pipeline::program::P;\npub struct A;\n",
    );
    write("pipeline/phases/b/mod.rs", "mod c;\npub use c::B;\n");
    write(
        "pipeline/phases/b/c.rs",
        "pub struct B;\nfn f() -> crate::pipeline::phases::a::A { todo!() }\nfn g() -> super::B { B }\n",
    );
    write(
        "pipeline/program.rs",
        "pub struct P(crate::standalone::S);\n",
    );
    write(
        "standalone.rs",
        "pub struct S;\nfn h(_: crate::pipeline::program::P) {}\n",
    );
    let krate = load("fixture", &src.join("lib.rs"));
    let phases = Rule::ChildrenApart {
        parent: "pipeline::phases",
        why: "apart",
    };
    let broken = krate.broken(&phases);
    let file = |path: &str| src.join(path).display().to_string();
    assert_eq!(
        broken,
        [
            format!(
                "{}: `super::b::B` reaches pipeline::phases::b::c: apart",
                file("pipeline/phases/a.rs")
            ),
            format!(
                "{}: `crate::pipeline::phases::a::A` reaches pipeline::phases::a: apart",
                file("pipeline/phases/b/c.rs")
            ),
        ]
    );
    let below = |to| Rule::Below {
        from: "pipeline",
        to,
        why: "below",
    };
    assert_eq!(
        krate.broken(&below("standalone")),
        [format!(
            "{}: `crate::standalone::S` reaches standalone: below",
            file("pipeline/program.rs")
        )]
    );
    assert_eq!(
        krate.broken(&below("commands")),
        ["fixture: a rule names commands, which it has no longer"]
    );
}

#[test]
fn the_graph_sees_a_cycle_through_a_reexport_and_not_the_wiring() {
    // A fixture crate: `a` uses `b` through the folder's re-export, `b` uses `a`; the
    // folder's `pub use` lines are wiring.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::write(src.join("lib.rs"), "mod f;\nmod c;\n").unwrap();
    std::fs::create_dir(src.join("f")).unwrap();
    std::fs::write(
        src.join("f/mod.rs"),
        "mod a;\nmod b;\npub use a::A;\npub use b::{B, other};\n",
    )
    .unwrap();
    std::fs::write(src.join("f/a.rs"), "use super::B;\npub struct A(B);\n").unwrap();
    std::fs::write(
        src.join("f/b.rs"),
        "pub struct B;\nfn g() -> crate::f::A { todo!() }\n#[cfg(test)]\nmod tests {\n    use crate::c::C;\n}\n",
    )
    .unwrap();
    std::fs::write(src.join("c.rs"), "pub struct C(crate::f::A);\n").unwrap();
    let krate = load("fixture", &src.join("lib.rs"));
    let edges = krate.edges();
    let module = |text: &str| -> ModulePath { text.split("::").map(String::from).collect() };
    assert_eq!(edges[&module("f::a")], BTreeSet::from([module("f::b")]));
    assert_eq!(
        edges[&module("f::b")],
        BTreeSet::from([module("f::a")]),
        "tests are left out"
    );
    assert_eq!(edges[&module("c")], BTreeSet::from([module("f::a")]));
    assert!(!edges.contains_key(&module("f")), "re-exports are wiring");
    let found = cycles(&edges);
    assert_eq!(found, [vec![module("f::a"), module("f::b")]]);
    assert_eq!(one_cycle(&edges, &found[0]), "f::a -> f::b -> f::a");
}
