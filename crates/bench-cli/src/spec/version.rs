//! `spec_version`: which grammar a spec file is written in, so that a spec written for an
//! earlier release keeps meaning what it meant.
//!
//! - 1 (the key absent): the grammar of the release before file contents took JSON as it
//!   is. Then `[[install.write]] content` was a template like every other, with `{{` and
//!   `}}` for literal braces, and specs wrote `{{"hasCompletedOnboarding": true}}`.
//! - 2: `content` is read by [`Template::parse_content`]: only `{name}` and `{json:name}`
//!   are placeholders, every other brace is written as it is.

use super::model::Spec;
use super::template::Template;

/// The newest grammar this build reads.
pub const CURRENT_SPEC_VERSION: u32 = 2;

/// The grammar a spec without `spec_version` is read in.
const UNVERSIONED: u32 = 1;

/// The message for a `spec_version` this build does not read, `None` when it reads it.
pub(super) fn unknown_version(version: u32) -> Option<String> {
    (!(UNVERSIONED..=CURRENT_SPEC_VERSION).contains(&version)).then(|| {
        format!(
            "spec_version {version} is not one this clibench reads (1 to {CURRENT_SPEC_VERSION}); \
             a newer clibench wrote it, or it is a typo"
        )
    })
}

/// Reads the file contents of an unversioned spec in the grammar it was written in.
///
/// A content that is a valid template of the old grammar is read as one: `{{` and `}}` are
/// single braces again. Any other content (JSON with single braces, which the old grammar
/// refused) is already in the current grammar. The two readings differ only for contents
/// with doubled braces, which is the old escape; a spec that means literal `{{` in a file
/// says `spec_version = 2`.
pub(super) fn read_as_written(spec: &mut Spec) {
    if spec.spec_version.unwrap_or(UNVERSIONED) != UNVERSIONED {
        return;
    }
    for file in &mut spec.install.write {
        if let Ok(old) = Template::parse(file.content.raw()) {
            file.content = old;
        }
    }
}
