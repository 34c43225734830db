//! `[install]` and `[workspace]`.

use super::checker::{Checker, Stage, key, keyed};
use crate::spec::model::{Install, Workspace};

/// `[install]`: the installer's command, folder, timeout and environment, the version
/// check, the files it leaves, the inventory and the files written into the home.
pub(super) fn install(c: &mut Checker<'_>, install: &Install) {
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
}

/// `[workspace]`: the folder and its files, relative to the home.
pub(super) fn workspace(c: &mut Checker<'_>, workspace: &Workspace) {
    if workspace.create {
        c.relative(key(&["workspace", "path"]), &workspace.path);
        for name in workspace.files.keys() {
            c.relative(key(&["workspace", "files", name]), name);
        }
    }
}
