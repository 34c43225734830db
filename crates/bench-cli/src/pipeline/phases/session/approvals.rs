//! Where an agent's tool approvals are set: named in the error of a turn that stopped on
//! a question, so that the reader knows which setting answers it
//! (docs/writing-a-spec.md, "Letting the agent work").

use std::path::Path;

/// `(program, setting)` for the agents whose approvals clibench has met.
const SETTINGS: &[(&str, &str)] = &[
    (
        "claude",
        r#""permissions": { "allow": ["Bash"] } in ~/.claude/settings.json"#,
    ),
    ("codex", r#"-c approval_policy="never" in the command"#),
    ("cn", "--auto in the command: every tool allowed"),
    (
        "copilot",
        "--allow-all-tools in the command, or --allow-tool 'shell(seq)'",
    ),
    (
        "gemini",
        r#"a policy rule in ~/.gemini/policies/: toolName = "run_shell_command", decision = "allow""#,
    ),
    (
        "kilo",
        r#""permission": { "bash": "allow" } in its opencode.json"#,
    ),
    (
        "opencode",
        r#""permission": { "bash": "allow" } in ~/.config/opencode/opencode.json"#,
    ),
    (
        "qwen",
        r#""tools": { "approvalMode": "yolo" } in ~/.qwen/settings.json, or --yolo"#,
    ),
];

/// The approval setting of the agent `program` (a path or a name), when clibench knows it.
pub(crate) fn setting_of(program: &str) -> Option<&'static str> {
    let name = Path::new(program).file_name()?.to_str()?;
    SETTINGS
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, setting)| *setting)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_is_known_by_its_program_name_wherever_it_lies() {
        assert!(setting_of("qwen").unwrap().contains("yolo"));
        assert!(
            setting_of("/home/u/.local/bin/copilot")
                .unwrap()
                .contains("allow-all-tools")
        );
        assert_eq!(setting_of("bench-cli-fixture-agent"), None);
    }
}
