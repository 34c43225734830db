//! The shipped specs parse, and `examples/prime-agent.toml` represents every step of a
//! benchmark of prime-agent (install, checks, starts, kernel, UI, sessions).

// The library's spec reader: the shipped files are read exactly as clibench reads them.
use bench_cli::spec::{self, Spec, Template};
use bench_term::ReadyMode;
use std::path::PathBuf;

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

fn load(name: &str) -> Spec {
    spec::load(&example(name)).unwrap_or_else(|error| panic!("{error}"))
}

fn raw(command: &[Template]) -> Vec<&str> {
    command.iter().map(Template::raw).collect()
}

#[test]
fn pi_spec_parses_as_an_install_only_registry_target() {
    let pi = load("agents/pi.toml");
    assert!(pi.source.is_none());
    assert_eq!(pi.package.as_deref(), Some("@mariozechner/pi-coding-agent"));
    let install = raw(pi.install.command.as_ref().unwrap());
    assert_eq!(&install[..3], ["npm", "install", "--global"]);
    assert!(
        install
            .last()
            .unwrap()
            .starts_with("@mariozechner/pi-coding-agent@")
    );
    assert_eq!(pi.install.env["NPM_CONFIG_PREFIX"].raw(), "{home}/.local");
    let measure = pi.measure.as_ref().unwrap();
    assert_eq!(raw(&measure.command), ["pi"]);
    assert!(!pi.origin.serve);
}

#[test]
fn demo_spec_parses() {
    let text = std::fs::read_to_string(example("demo-agent/demo.toml")).unwrap();
    // clibench fills these in when it materialises the demo's repository.
    let text = text
        .replace("@DEMO_SOURCE@", "/tmp/demo-source")
        .replace("@DEMO_COMMIT@", &"a".repeat(40));
    spec::parse(&text, "demo.toml").unwrap_or_else(|error| panic!("{error}"));
}

/// One step of a benchmark of prime-agent and how to find it in the spec.
struct Step {
    what: &'static str,
    found: fn(&Spec) -> bool,
}

fn build_step(spec: &Spec, command: &[&str], cwd: Option<&str>) -> bool {
    spec.build
        .iter()
        .any(|step| raw(&step.command) == command && step.cwd.as_ref().map(Template::raw) == cwd)
}

const NATIVE_GUARD: [&str; 2] = [
    "packages/coding-agent/scripts/build-binary.mjs",
    "scripts/assemble-release-archives.mjs",
];

fn native_step(spec: &Spec, command_has: &str) -> bool {
    spec.build.iter().any(|step| {
        raw(&step.command).iter().any(|a| a.contains(command_has))
            && raw(&step.when_exists) == NATIVE_GUARD
    })
}

fn steps() -> Vec<Step> {
    let tsgo = |package: &'static str| -> fn(&Spec) -> bool {
        match package {
            "tui" => |s| build_step(s, &TSGO, Some("packages/tui")),
            "ai" => |s| build_step(s, &TSGO, Some("packages/ai")),
            "agent" => |s| build_step(s, &TSGO, Some("packages/agent")),
            _ => |s| build_step(s, &TSGO, Some("packages/coding-agent")),
        }
    };
    vec![
        Step {
            what: "git init / fetch --depth=1 REPO SHA / checkout --detach FETCH_HEAD / rev-parse HEAD",
            found: |s| s.source.as_ref().is_some_and(|src| src.commit.len() == 40),
        },
        Step {
            what: "npm ci --no-audit --no-fund",
            found: |s| build_step(s, &["npm", "ci", "--no-audit", "--no-fund"], None),
        },
        Step {
            what: "tsgo -p tsconfig.build.json in packages/tui",
            found: tsgo("tui"),
        },
        Step {
            what: "tsgo -p tsconfig.build.json in packages/ai",
            found: tsgo("ai"),
        },
        Step {
            what: "tsgo -p tsconfig.build.json in packages/agent",
            found: tsgo("agent"),
        },
        Step {
            what: "tsgo -p tsconfig.build.json in packages/coding-agent",
            found: tsgo("coding-agent"),
        },
        Step {
            what: "chmod +x dist/cli.js",
            found: |s| {
                build_step(
                    s,
                    &["chmod", "+x", "dist/cli.js"],
                    Some("packages/coding-agent"),
                )
            },
        },
        Step {
            what: "npm run copy-assets",
            found: |s| {
                build_step(
                    s,
                    &["npm", "run", "copy-assets"],
                    Some("packages/coding-agent"),
                )
            },
        },
        Step {
            what: "npm run bundle",
            found: |s| build_step(s, &["npm", "run", "bundle"], Some("packages/coding-agent")),
        },
        Step {
            what: "node scripts/pack-prime-agent-release.mjs --base-url ORIGIN --version VERSION --out-dir ...",
            found: |s| {
                build_step(
                    s,
                    &[
                        "node",
                        "scripts/pack-prime-agent-release.mjs",
                        "--base-url",
                        "{origin}",
                        "--version",
                        "{version}",
                        "--out-dir",
                        "packages/coding-agent/release/benchmark",
                    ],
                    None,
                ) && s.origin.port == Some(18741)
                    && s.version.as_deref() == Some("0.0.0-benchmark")
            },
        },
        Step {
            what: "the four release tarballs (*.tgz, exactly 4)",
            found: |s| {
                s.artifacts.iter().any(|a| {
                    a.glob == "*.tgz"
                        && a.count == Some(4)
                        && a.folder.raw()
                            == "{source}/packages/coding-agent/release/benchmark/artifacts"
                })
            },
        },
        Step {
            what: "optional native build: npm install bun@1.4.0 into .benchmark-bun",
            found: |s| native_step(s, "bun@1.4.0"),
        },
        Step {
            what: "optional native build: node build-binary.mjs --platform linux-x64 with BUN_BINARY",
            found: |s| {
                native_step(s, "build-binary.mjs")
                    && s.build.iter().any(|b| b.env.contains_key("BUN_BINARY"))
            },
        },
        Step {
            what: "optional native build: node assemble-release-archives.mjs BINARIES ARTIFACTS VERSION",
            found: |s| native_step(s, "assemble-release-archives.mjs"),
        },
        Step {
            what: "the native archive (*.tar.gz) when built",
            found: |s| {
                s.artifacts
                    .iter()
                    .any(|a| a.glob == "*.tar.gz" && !a.required)
            },
        },
        Step {
            what: "served at ORIGIN/releases/vVERSION",
            found: |s| s.origin.serve && s.origin.path.raw() == "/releases/v{version}/",
        },
        Step {
            what: "node --version and npm --version recorded",
            found: |s| {
                s.versions
                    .get("node")
                    .is_some_and(|c| raw(c) == ["node", "--version"])
                    && s.versions
                        .get("npm")
                        .is_some_and(|c| raw(c) == ["npm", "--version"])
            },
        },
        Step {
            what: "Linux x64 only",
            found: |s| s.architectures == ["x86_64"],
        },
        Step {
            what: "sh SOURCE/install.sh VERSION with the PRIME_AGENT_* environment, 240 s",
            found: |s| {
                let env = &s.install.env;
                s.install.command.as_deref().map(raw)
                    == Some(vec!["sh", "{source}/install.sh", "{version}"])
                    && s.install.timeout.as_secs() == 240
                    && env["PRIME_AGENT_DOWNLOAD_BASE_URL"].raw() == "{origin}"
                    && [
                        "PRIME_AGENT_ALLOW_INSECURE_HTTP_FOR_TESTS",
                        "PRIME_AGENT_INSTALLER_PLAIN",
                        "PRIME_AGENT_BOOTSTRAP_KERNEL_ON_INSTALL",
                        "PRIME_AGENT_BOOTSTRAP_TOOLS_ON_INSTALL",
                        "PRIME_AGENT_INSTALL_UV",
                    ]
                    .iter()
                    .all(|k| env.get(*k).is_some_and(|v| v.raw() == "1"))
            },
        },
        Step {
            what: "prime-agent --version contains VERSION",
            found: |s| {
                s.install
                    .version_command
                    .as_ref()
                    .is_some_and(|c| raw(c) == ["prime-agent", "--version"])
                    && s.install.version_contains.as_ref().map(Template::raw) == Some("{version}")
            },
        },
        Step {
            what: "ELF format check of ~/.local/bin/prime-agent (compiled when the native archive was built)",
            found: |s| {
                s.install.executable.as_ref().map(Template::raw)
                    == Some("{home}/.local/bin/prime-agent")
                    && s.install.compiled_if_artifact.as_deref()
                        == Some("prime-agent-*-linux-x64.tar.gz")
            },
        },
        Step {
            what: "the kernel venv's python exists",
            found: |s| {
                s.install
                    .files
                    .iter()
                    .any(|f| f.raw() == "{home}/.prime/agent/kernel-venv/bin/python")
            },
        },
        Step {
            what: "settings.json with onboardingShown",
            found: |s| {
                s.install.write.iter().any(|w| {
                    w.path == ".prime/agent/settings.json"
                        && w.content.raw() == "{\"onboardingShown\": true}\n"
                })
            },
        },
        Step {
            what: "the fixture workspace (README.md, example.py, fixed dates)",
            found: |s| {
                s.workspace.create
                    && s.workspace.date == "2000-01-01T00:00:00Z"
                    && s.workspace.files.contains_key("README.md")
                    && s.workspace.files.contains_key("example.py")
            },
        },
        Step {
            what: "npm ls --global --all --json saved as installed-dependencies.json",
            found: |s| {
                s.install
                    .inventory
                    .as_ref()
                    .is_some_and(|c| raw(c) == ["npm", "ls", "--global", "--all", "--json"])
                    && s.install.inventory_file == "installed-dependencies.json"
            },
        },
        Step {
            what: "prime-agent in a PTY, ready by probe, settle 1 s",
            found: |s| {
                s.measure.as_ref().is_some_and(|m| {
                    raw(&m.command) == ["prime-agent"]
                        && matches!(m.ready, ReadyMode::Probe)
                        && m.settle.0
                            == bench_proc::Settle::Fixed(std::time::Duration::from_secs(1))
                })
            },
        },
        Step {
            what: "prime-agent list --json / stop ID --json (sessions[].activeSessionId)",
            found: |s| {
                s.measure.as_ref().is_some_and(|m| {
                    m.list_sessions.as_deref().map(raw)
                        == Some(vec!["prime-agent", "list", "--json"])
                        && m.stop_session.as_deref().map(raw)
                            == Some(vec!["prime-agent", "stop", "{id}", "--json"])
                        && m.sessions_field == "sessions"
                        && m.session_id_field == "activeSessionId"
                })
            },
        },
        Step {
            what: "the kernel: python -m rlm.repl in .prime/agent/kernel-venv",
            found: |s| {
                s.runtime.as_ref().is_some_and(|r| {
                    raw(&r.command)
                        == [
                            "{home}/.prime/agent/kernel-venv/bin/python",
                            "-m",
                            "rlm.repl",
                        ]
                        && r.setup == ["from rlm import bash"]
                })
            },
        },
        Step {
            what: "du --exclude list for disk",
            found: |s| {
                s.disk.exclude
                    == [
                        ".cache",
                        ".npm",
                        "*.log",
                        "sessions",
                        "session-artifacts",
                        "workspace",
                    ]
            },
        },
    ]
}

const TSGO: [&str; 3] = [
    "{source}/node_modules/.bin/tsgo",
    "-p",
    "tsconfig.build.json",
];

#[test]
fn prime_agent_spec_represents_every_step() {
    let spec = load("prime-agent.toml");
    let missing: Vec<&str> = steps()
        .iter()
        .filter(|step| !(step.found)(&spec))
        .map(|step| step.what)
        .collect();
    assert!(
        missing.is_empty(),
        "steps missing from prime-agent.toml: {missing:#?}"
    );
}

#[test]
fn step_check_can_fail() {
    // The check above is only worth something if a spec without the steps fails it.
    let bare = spec::parse(
        "name = \"x\"\n[install]\ncommand = [\"sh\", \"install.sh\"]\n",
        "bare.toml",
    )
    .unwrap();
    let found = steps().iter().filter(|step| (step.found)(&bare)).count();
    // Only the workspace and disk defaults are there without being written.
    assert_eq!(found, 2);
}

#[test]
fn the_full_example_in_the_docs_parses() {
    let docs = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/spec.md"),
    )
    .unwrap();
    let (_, after) = docs.split_once("## A full example").unwrap();
    let (_, block) = after.split_once("```toml\n").unwrap();
    let (text, _) = block.split_once("```").unwrap();
    let spec = spec::parse(text, "docs/spec.md").unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(spec.name, "tool");
    assert_eq!(spec.spec_version, Some(spec::CURRENT_SPEC_VERSION));
    assert_eq!(spec.ui.unwrap().steps.len(), 1);
}

/// The agents users run, one spec each under `examples/agents/`.
const AGENTS: [(&str, &str); 9] = [
    ("claude-code", "@anthropic-ai/claude-code"),
    ("codex", "@openai/codex"),
    ("continue-cli", "@continuedev/cli"),
    ("copilot-cli", "@github/copilot"),
    ("gemini-cli", "@google/gemini-cli"),
    ("kilocode", "@kilocode/cli"),
    ("opencode", "opencode-ai"),
    ("pi", "@mariozechner/pi-coding-agent"),
    ("qwen-code", "@qwen-code/qwen-code"),
];

#[test]
fn every_agent_spec_parses_and_names_its_npm_package() {
    let folder = example("agents");
    let mut found: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "toml"))
        .map(|path| path.file_stem().unwrap().to_string_lossy().into_owned())
        // The board file that names them is not a spec (tests/it/board.rs reads it).
        .filter(|name| name != "board")
        .collect();
    found.sort();
    let expected: Vec<&str> = AGENTS.iter().map(|(name, _)| *name).collect();
    assert_eq!(found, expected);
    for (name, package) in AGENTS {
        let spec = load(&format!("agents/{name}.toml"));
        assert_eq!(spec.name, name);
        assert_eq!(spec.package.as_deref(), Some(package), "{name}");
        let version = spec.version.as_deref().unwrap();
        let install = raw(spec.install.command.as_ref().unwrap());
        assert_eq!(&install[..3], ["npm", "install", "--global"], "{name}");
        assert_eq!(install.last().unwrap(), &format!("{package}@{{version}}"));
        assert!(!version.is_empty());
        // `bundle` counts what the install downloads, not only the wrapper npm packs.
        assert!(
            spec.artifacts.iter().all(|set| set.npm_dependencies),
            "{name}: an artifact set without npm_dependencies"
        );
        let measure = spec.measure.as_ref().unwrap();
        assert!(spec.staircase.is_some(), "{name} has no [staircase]");
        // Every agent but pi (whose editor the probe measures) names its real prompt.
        if name != "pi" {
            assert!(
                matches!(measure.ready, ReadyMode::Pattern(_)),
                "{name}: {}",
                measure.ready
            );
        }
    }
}

/// The files the agent specs write into the home are valid JSON or TOML once their
/// placeholders are filled in, even with a home whose path needs escaping.
#[test]
fn agent_home_files_are_valid_json_and_toml() {
    let mut values = spec::Values::default();
    values
        .set(spec::Placeholder::Home, "/home/o\"brien")
        .set(spec::Placeholder::Workspace, "/home/o\"brien/workspace")
        .set(spec::Placeholder::User, "clibench-1-0")
        .set(spec::Placeholder::Out, "/tmp/out")
        .set(spec::Placeholder::Version, "1.2.3")
        .set(spec::Placeholder::ModelUrl, "http://127.0.0.1:9/m/a\"b");
    let mut checked = 0;
    let mut shell_allowed = Vec::new();
    for (name, _) in AGENTS {
        let spec = load(&format!("agents/{name}.toml"));
        for file in &spec.install.write {
            let text = file
                .content
                .expand(&values)
                .unwrap_or_else(|error| panic!("{name} {}: {error}", file.path));
            if file.path.ends_with(".json") {
                let json: serde_json::Value = serde_json::from_str(&text)
                    .unwrap_or_else(|error| panic!("{name} {}: {error}\n{text}", file.path));
                if name == "claude-code" && file.path == ".claude.json" {
                    let project = &json["projects"]["/home/o\"brien/workspace"];
                    assert_eq!(project["hasTrustDialogAccepted"], true, "{text}");
                }
                // The scenarios' shell commands (big-output's `yes | head -c`) run without
                // an approval question the session cannot answer.
                if name == "claude-code" && file.path == ".claude/settings.json" {
                    let allow = &json["permissions"]["allow"];
                    assert_eq!(allow, &serde_json::json!(["Bash"]), "{text}");
                    shell_allowed.push(name);
                }
                // The model endpoint's URL reaches the provider settings intact.
                if name == "opencode" || name == "kilocode" {
                    let url = &json["provider"]["anthropic"]["options"]["baseURL"];
                    assert_eq!(url, "http://127.0.0.1:9/m/a\"b/v1", "{text}");
                }
                if name == "pi" {
                    let url = &json["providers"]["anthropic"]["baseUrl"];
                    assert_eq!(url, "http://127.0.0.1:9/m/a\"b", "{text}");
                }
            } else if file.path.ends_with(".toml") {
                let toml: toml::Table = text
                    .parse()
                    .unwrap_or_else(|error| panic!("{name} {}: {error}\n{text}", file.path));
                if name == "codex" {
                    let trust = &toml["projects"]["/home/o\"brien/workspace"]["trust_level"];
                    assert_eq!(trust.as_str(), Some("trusted"), "{text}");
                }
                if name == "gemini-cli" && file.path == ".gemini/policies/clibench.toml" {
                    let rule = &toml["rule"][0];
                    assert_eq!(rule["toolName"].as_str(), Some("run_shell_command"));
                    assert_eq!(rule["decision"].as_str(), Some("allow"), "{text}");
                    assert!(rule.get("commandPrefix").is_none(), "{text}");
                    shell_allowed.push(name);
                }
            } else if file.path.ends_with(".yaml") {
                // Continue's config: the URL in a double-quoted (JSON) string is YAML's too.
                assert!(
                    text.contains(r#"apiBase: "http://127.0.0.1:9/m/a\"b/v1/""#),
                    "{name} {}: {text}",
                    file.path
                );
            } else {
                panic!("{name}: {} is neither JSON, TOML nor YAML", file.path);
            }
            checked += 1;
        }
    }
    assert_eq!(
        checked, 12,
        "claude 2, codex 2, continue 1, copilot 1, gemini 2, kilo 1, opencode 1, pi 1, qwen 1"
    );
    assert_eq!(shell_allowed, ["claude-code", "gemini-cli"]);
}

#[test]
fn gemini_is_ready_only_once_its_banner_is_drawn() {
    let spec = load("agents/gemini-cli.toml");
    let ReadyMode::Pattern(pattern) = &spec.measure.as_ref().unwrap().ready else {
        panic!("gemini-cli waits for a pattern");
    };
    // What gemini-cli 0.61.0 shows about 0.3 s before its banner, then its first screen.
    let box_only = " ? for shortcuts\n────\n Shift+Tab to accept edits\n\n >   Type your message or @path/to/file\n";
    let whole = format!(
        " ▝▜▄     Gemini CLI v0.61.0\n  ▗▟▀    Authenticated with gemini-api-key /auth\n\n\
         Tips for getting started:\n1. Create GEMINI.md files to customize your interactions\n\
         {box_only}"
    );
    assert!(!pattern.is_match(box_only), "{pattern}");
    assert!(pattern.is_match(&whole), "{pattern}");
    // A later start (the staircase's second instance) has no tips.
    let later = format!(
        " ▝▜▄     Gemini CLI v0.61.0\n  ▗▟▀    Authenticated with gemini-api-key /auth\n{box_only}"
    );
    assert!(pattern.is_match(&later), "{pattern}");
}
