//! Is the screen at ready a program waiting for its user, or a dialog in the way?
//!
//! A ready mode only says that the program reads keys (probe), drew something
//! (first frame) or stopped drawing (stable). A first-run dialog does all of that
//! too: gemini-cli's folder-trust menu and its "Enter Gemini API Key" box both
//! echo typed keys, so a start-up measured to them looks like a success and is
//! only found by replaying the transcript. [`ReadyGuard`] looks at the screen at
//! ready and fails such a start instead:
//!
//! - `require`: a regex that must match the screen at ready (the real prompt);
//! - `reject`: regexes that must not match ("blocked by: PATTERN");
//! - the dialogs it knows: the blocking prompts of agent CLIs seen so far (trust this
//!   folder, API key, sign in / log in, press Enter to continue, choose an
//!   option, y/n questions). A match fails the start "blocked by a dialog", unless
//!   the guard allows dialogs or one of its expected patterns (`require`, or the
//!   ready pattern) matches the very line the dialog was found on: a spec that
//!   waits for a dialog on purpose says so.

use regex::Regex;
use std::fmt;
use std::sync::LazyLock;

/// One kind of blocking prompt: a name for messages and the pattern that finds it.
#[derive(Debug)]
pub(crate) struct Dialog {
    /// What it is, for messages ("folder trust").
    name: &'static str,
    /// Matched against each line of the screen, case-insensitively.
    pattern: Regex,
}

/// `(name, regex)` of every dialog kind; compiled once into [`DIALOGS`].
///
/// Each entry names a phrase that asks the user for a decision or a secret
/// before the program can be used. Phrases that merely mention a topic ("sign in
/// status: ok", "/auth to change") are left alone: a false alarm fails a good
/// start, so an entry must be a question or an order.
const DIALOG_PATTERNS: &[(&str, &str)] = &[
    ("folder trust", r"(?i)\bdo you trust\b"),
    (
        "folder trust",
        r"(?i)\btrust (this|the) (folder|directory|workspace|project|files)\b",
    ),
    (
        "API key",
        r"(?i)\b(enter|paste|provide|input|type)\b.{0,40}\bapi[ _-]?key\b",
    ),
    ("API key", r"(?i)^\W*api[ _-]?key\s*:"),
    (
        "sign in",
        r"(?i)\b(please )?(sign|log) ?in (with|to continue|to use|required)\b",
    ),
    (
        "sign in",
        r"(?i)\b(select|choose) (a |an |your )?(log ?in|sign ?in|auth\w*) method\b",
    ),
    (
        "sign in",
        r"(?i)\bhow would you like to (authenticate|log ?in|sign ?in)\b",
    ),
    (
        "press Enter",
        r"(?i)\bpress (enter|return|any key) to (continue|confirm|proceed|start|begin)\b",
    ),
    (
        "choose an option",
        r"(?i)\b(choose|select|pick) (an|one|the|a) (option|choice|theme|color scheme|text style)\b",
    ),
    ("yes/no question", r"(?i)[(\[]\s*y(es)?\s*/\s*n(o)?\s*[)\]]"),
];

/// `(name, regex)` of the questions an agent asks in the middle of its work, before a
/// tool call or an edit: a permission prompt, a selection menu, a confirmation. Looked for
/// only while a turn waits with nothing left for the agent to read
/// ([`find_waiting_dialog`]), together with [`DIALOG_PATTERNS`].
const WORK_DIALOG_PATTERNS: &[(&str, &str)] = &[
    (
        "permission prompt",
        r"(?i)\ballow (execution|running|this|the|command|tool|edit|write|access)\b.*\?",
    ),
    (
        "permission prompt",
        r"(?i)\bdo you want to (proceed|run|allow|make|execute|continue|create|apply|overwrite|write|edit|delete)\b",
    ),
    (
        "permission prompt",
        r"(?i)\b(would you like|want) (me )?to (run|execute|allow|continue|proceed)\b.*\?",
    ),
    (
        "permission prompt",
        r"(?i)\b(permission (required|needed|requested)|requires? (your )?(permission|approval))\b",
    ),
    (
        "selection menu",
        r"(?i)(↑/↓|↑↓|arrow keys)\W{0,5}.{0,20}\b(navigate|select|move|choose)\b",
    ),
    (
        "selection menu",
        r"(?i)\benter to (select|confirm|choose|approve)\b",
    ),
    (
        "selection menu",
        r"(?i)^\W{0,6}1[.)]\s+(yes|allow|approve|run|proceed)\b",
    ),
];

/// A line that gives advice rather than asking: "* Tip: Press escape to pause cn, and
/// press enter to continue" is a start-up tip of Continue's cn, and was taken for a
/// blocking "press Enter" in one start of three.
static ADVICE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\W*(tips?|hints?|did you know)\b\s*[:：!-]")
        .expect("the advice pattern is valid")
});

/// The dialog kinds, compiled.
static DIALOGS: LazyLock<Vec<Dialog>> = LazyLock::new(|| compile(DIALOG_PATTERNS));

/// The dialog kinds of work, then those of start-up, compiled.
static WORK_DIALOGS: LazyLock<Vec<Dialog>> =
    LazyLock::new(|| compile(&[WORK_DIALOG_PATTERNS, DIALOG_PATTERNS].concat()));

fn compile(patterns: &[(&'static str, &'static str)]) -> Vec<Dialog> {
    patterns
        .iter()
        .map(|(name, pattern)| Dialog {
            name,
            pattern: Regex::new(pattern).expect("the dialog patterns are valid"),
        })
        .collect()
}

/// A dialog found on a screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DialogHit {
    /// The dialog kind's name.
    pub name: &'static str,
    /// The screen line it was found on, trimmed.
    pub line: String,
}

/// The first blocking prompt on `screen`, looked for line by line (advice is none).
pub(crate) fn find_dialog(screen: &str) -> Option<DialogHit> {
    find_in(screen, &DIALOGS).map(|(_, hit)| hit)
}

/// The first question on `screen` that an agent at work waits on for its user (a
/// permission prompt, a selection menu, a confirmation, or any blocking prompt of
/// start-up), with the question it asks: the line found when it asks, else the nearest
/// line above it that does (a menu's "1. Yes, allow once" under "Allow execution of:
/// 'seq'?"). Only meaningful when the agent has nothing left to read: a reply that
/// streams may say "Do you want to proceed?" itself.
pub fn find_waiting_dialog(screen: &str) -> Option<DialogHit> {
    let (at, mut hit) = find_in(screen, &WORK_DIALOGS)?;
    if !hit.line.contains('?') {
        let lines: Vec<&str> = screen.lines().collect();
        if let Some(question) = lines[at.saturating_sub(8)..at]
            .iter()
            .rev()
            .map(|line| quoted(line))
            .find(|line| line.contains('?') && !ADVICE.is_match(line))
        {
            hit.line = question;
        }
    }
    Some(hit)
}

/// A screen line as a message quotes it: without the blanks and the box drawing around
/// it (cn draws its question inside a box, `│  Would you like to continue?`).
fn quoted(line: &str) -> String {
    line.trim_matches(|c: char| c.is_whitespace() || ('\u{2500}'..='\u{257F}').contains(&c))
        .to_owned()
}

/// The first line of `screen` that one of `dialogs` matches, advice left out, and where.
fn find_in(screen: &str, dialogs: &[Dialog]) -> Option<(usize, DialogHit)> {
    screen
        .lines()
        .enumerate()
        .filter(|(_, line)| !ADVICE.is_match(line))
        .find_map(|(at, line)| {
            dialogs
                .iter()
                .find(|dialog| dialog.pattern.is_match(line))
                .map(|dialog| {
                    let hit = DialogHit {
                        name: dialog.name,
                        line: quoted(line),
                    };
                    (at, hit)
                })
        })
}

/// Why the screen at ready does not count as ready.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocked {
    /// A `reject` pattern matched.
    Rejected {
        /// The pattern.
        pattern: String,
    },
    /// The `require` pattern did not match.
    Missing {
        /// The pattern.
        pattern: String,
    },
    /// A blocking prompt is on the screen.
    Dialog(DialogHit),
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Blocked::Rejected { pattern } => write!(f, "blocked by: {pattern}"),
            Blocked::Missing { pattern } => {
                write!(
                    f,
                    "the screen at ready does not match the required {pattern}"
                )
            }
            Blocked::Dialog(hit) => write!(
                f,
                "blocked by a dialog ({}: {:?}); if it is expected, allow dialogs \
                 (ready_allow_dialog, --allow-dialog) or require a pattern that matches that line",
                hit.name, hit.line
            ),
        }
    }
}

/// What the screen at ready must and must not show. The default looks for the
/// blocking dialogs the [module](self) lists only.
#[derive(Debug, Clone, Default)]
pub struct ReadyGuard {
    /// Must match the screen at ready.
    pub require: Option<Regex>,
    /// Must not match the screen at ready.
    pub reject: Vec<Regex>,
    /// Whether a dialog on the screen is expected (no dialog check at all).
    pub allow_dialog: bool,
    /// Patterns that say a dialog is expected when they match the dialog's line
    /// (the ready pattern of `pattern:` mode, say).
    pub expected: Vec<Regex>,
}

impl ReadyGuard {
    /// Checks the screen at ready: rejects first, then the requirement, then dialogs.
    pub fn check(&self, screen: &str) -> Result<(), Blocked> {
        if let Some(regex) = self.reject.iter().find(|r| r.is_match(screen)) {
            return Err(Blocked::Rejected {
                pattern: regex.as_str().to_owned(),
            });
        }
        if let Some(require) = &self.require
            && !require.is_match(screen)
        {
            return Err(Blocked::Missing {
                pattern: require.as_str().to_owned(),
            });
        }
        if self.allow_dialog {
            return Ok(());
        }
        match find_dialog(screen) {
            Some(hit)
                if !self
                    .require
                    .iter()
                    .chain(&self.expected)
                    .any(|r| r.is_match(&hit.line)) =>
            {
                Err(Blocked::Dialog(hit))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dialogs as agent CLIs draw them (gemini-cli, claude-code, codex first runs).
    const DIALOG_SCREENS: &[(&str, &str)] = &[
        (
            "│ Do you trust this folder?\n│ ● 1. Trust folder (demo)\n│   2. Don't trust",
            "folder trust",
        ),
        (
            "Do you trust the files in this folder?\n 1. Yes\n 2. No",
            "folder trust",
        ),
        (
            "Allow Codex to work in this folder without asking? Trust this workspace",
            "folder trust",
        ),
        ("│ Enter Gemini API Key\n│ > abc", "API key"),
        ("Please paste your OpenAI API key below", "API key"),
        ("API key: ", "API key"),
        ("Sign in with ChatGPT to use Codex", "sign in"),
        ("Select login method:\n ❯ 1. Claude account", "sign in"),
        (
            "How would you like to authenticate for this project?\n● 1. Login with Google",
            "sign in",
        ),
        ("Press Enter to continue…", "press Enter"),
        ("Choose an option below", "choose an option"),
        (
            "Choose the text style that looks best with your terminal",
            "choose an option",
        ),
        ("Overwrite the config? (y/n)", "yes/no question"),
        ("Update available. Install now? [Y/n]", "yes/no question"),
    ];

    /// Ready screens that must not look like dialogs.
    const READY_SCREENS: &[&str] = &[
        ">>> ",
        "pi v0.9\n> \n~/work (main) · claude-sonnet · 0% of 200k",
        "╭─────╮\n│ > Try \"fix lint errors\"\n╰─────╯\n? for shortcuts",
        "Tips for getting started:\n1. Ask questions, edit files, or run commands.\n2. Be specific.\n3. /help for more information.\n> Type your message or @path/to/file",
        "Signed in as someone@example.com\n› ",
        "To get started, describe a task or try one of these commands: /init /status",
        "fixture tui\n> ",
        "* Tip: Press escape to pause cn, and press enter to continue\n> ",
    ];

    #[test]
    fn every_kind_of_blocking_prompt_is_found_by_name() {
        for (screen, name) in DIALOG_SCREENS {
            let found = find_dialog(screen).map(|hit| hit.name).unwrap_or("none");
            assert_eq!(found, *name, "{screen:?}");
        }
    }

    #[test]
    fn real_prompts_are_not_dialogs() {
        for screen in READY_SCREENS {
            assert_eq!(find_dialog(screen), None, "{screen:?}");
        }
    }

    #[test]
    fn an_agent_waiting_at_work_is_found_with_its_question() {
        let found = |screen: &str| find_waiting_dialog(screen).map(|hit| (hit.name, hit.line));
        // qwen-code and gemini-cli before a shell command: the question, not the menu.
        let qwen = "✦ Running seq\n? Shell seq 1 400\nAllow execution of: 'seq'?\n\n› 1. Yes, allow once\n  2. Yes, allow always\n  3. No (esc)";
        assert_eq!(
            found(qwen),
            Some(("permission prompt", "Allow execution of: 'seq'?".to_owned()))
        );
        // Copilot's select menu names the question above its navigation hint.
        let copilot = "Run shell command\n seq 1 400\nDo you want to run this command?\n❯ 1. Yes\n  2. No, and tell Copilot what to do differently (Esc)\n↑/↓ to navigate · enter to select";
        assert_eq!(
            found(copilot),
            Some((
                "permission prompt",
                "Do you want to run this command?".to_owned()
            ))
        );
        // Continue's cn, even before an `ls`.
        let cn = "│  ⎿ Will run: ls\n│\n│  Would you like to continue?\n│\n│  Note: Dangerous commands will be blocked regardless of your preference.\n│  > Continue (tab)\n│    Continue + don't ask again (shift+tab)";
        assert_eq!(
            found(cn),
            Some((
                "permission prompt",
                "Would you like to continue?".to_owned()
            ))
        );
        let menu = "Pick one\n ● 1. Yes, proceed\n   2. No";
        assert_eq!(found(menu).map(|(name, _)| name), Some("selection menu"));
        assert_eq!(
            found("Overwrite notes.md? (y/n)").map(|(name, _)| name),
            Some("yes/no question")
        );
        // A tip, a reply's end and a prompt are no question waiting.
        for screen in [
            "* Tip: Press escape to pause cn, and press enter to continue\n> ",
            "Row 4 holds 4, row 5 holds 5. End of step 3.\n> ",
            "Tips for getting started:\n1. Ask questions, edit files, or run commands.\n> ",
        ] {
            assert_eq!(found(screen), None, "{screen:?}");
        }
    }

    #[test]
    fn rejects_come_first_then_the_requirement_then_dialogs() {
        let guard = ReadyGuard {
            require: Some(Regex::new(r"^> ").unwrap()),
            reject: vec![Regex::new("(?i)update available").unwrap()],
            ..ReadyGuard::default()
        };
        let blocked = |screen: &str| guard.check(screen).unwrap_err().to_string();
        insta::assert_snapshot!(
            [
                blocked("Update available\n> "),
                blocked("loading"),
                blocked("> \nDo you trust this folder?"),
            ]
            .join("\n"),
            @r#"
        blocked by: (?i)update available
        the screen at ready does not match the required ^> 
        blocked by a dialog (folder trust: "Do you trust this folder?"); if it is expected, allow dialogs (ready_allow_dialog, --allow-dialog) or require a pattern that matches that line
        "#
        );
        assert_eq!(guard.check("> "), Ok(()));
    }

    #[test]
    fn a_dialog_is_allowed_when_the_spec_expects_it() {
        let screen = "Do you trust this folder?\n1. Yes";
        assert!(ReadyGuard::default().check(screen).is_err());
        let allowed = ReadyGuard {
            allow_dialog: true,
            ..ReadyGuard::default()
        };
        assert_eq!(allowed.check(screen), Ok(()));
        let required = ReadyGuard {
            require: Some(Regex::new("trust this folder").unwrap()),
            ..ReadyGuard::default()
        };
        assert_eq!(required.check(screen), Ok(()));
        let expected = ReadyGuard {
            expected: vec![Regex::new("Do you trust").unwrap()],
            ..ReadyGuard::default()
        };
        assert_eq!(expected.check(screen), Ok(()));
        // A requirement met elsewhere on the screen does not excuse the dialog.
        let elsewhere = ReadyGuard {
            require: Some(Regex::new("1. Yes").unwrap()),
            ..ReadyGuard::default()
        };
        assert!(elsewhere.check(screen).is_err());
    }
}
