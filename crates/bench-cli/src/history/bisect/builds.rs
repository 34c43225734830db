//! The builds a bisection searches: the commits from good to bad on the first-parent line
//! of the spec's repository, or a package's published versions from good to bad, each
//! with the spec override that selects it and the history key its results record.

use crate::history::bisect::git;
use crate::history::bisect::versions::{self, Npm, VersionsError};
use crate::spec::Spec;
use bench_core::{Metric, Phase};
use std::path::{Path, PathBuf};

/// One build of the range.
#[derive(Debug, Clone)]
pub struct Build {
    /// How it is shown in progress lines (a commit's first 12 digits, a version).
    pub label: String,
    /// How the outcome names it (a full sha, a version).
    pub name: String,
    /// The spec override that selects it (`source.commit=SHA`, `version=V`).
    pub set: String,
    /// What its results record as `request.sha`: the history's key for it.
    pub revision: String,
}

/// Why the range cannot be listed.
#[derive(Debug, thiserror::Error)]
pub enum BuildsError {
    /// `--repository` for a spec of published versions.
    #[error(
        "--repository names a git repository to bisect commits in; this spec names a \
         published version (no [source]), so bisect searches the registry's versions"
    )]
    RepositoryForVersions,
    /// A version without a package to list the versions of.
    #[error("{} has a version but no package: bisect lists a package's published versions", spec.display())]
    NoPackage {
        /// The spec.
        spec: PathBuf,
    },
    /// A spec with neither a `[source]` nor a version.
    #[error("{} has no [source]: bisect builds commits of a repository", spec.display())]
    NoSource {
        /// The spec.
        spec: PathBuf,
    },
    /// A source repository that is not a local folder.
    #[error(
        "source.repository {repository} is not a local folder: clone it and give --repository PATH"
    )]
    NotLocal {
        /// The repository as the spec writes it.
        repository: String,
    },
    /// The commits cannot be listed.
    #[error(transparent)]
    Commits(#[from] git::GitError),
    /// The versions cannot be listed.
    #[error(transparent)]
    Versions(#[from] VersionsError),
}

impl BuildsError {
    /// Whether the caller asked for something that cannot be (rather than npm failing).
    pub fn is_input(&self) -> bool {
        match self {
            BuildsError::Versions(error) => matches!(
                error,
                VersionsError::NpmMissing { .. }
                    | VersionsError::NotPublished { .. }
                    | VersionsError::NotBefore { .. }
            ),
            _ => true,
        }
    }
}

/// The builds from `good` to `bad` of the spec at `spec_path` (`spec` parsed): its
/// published versions when it names a version and no `[source]`, else the commits of
/// `repository` (the spec's source repository when `None`). The noun says which.
pub fn builds(
    spec_path: &Path,
    spec: &Spec,
    repository: Option<&Path>,
    (good, bad): (&str, &str),
) -> Result<(Vec<Build>, &'static str), BuildsError> {
    if spec.source.is_none() && spec.version.is_some() {
        if repository.is_some() {
            return Err(BuildsError::RepositoryForVersions);
        }
        return Ok((published_versions(spec_path, spec, good, bad)?, "version"));
    }
    let repository = match repository {
        Some(path) => path.to_path_buf(),
        None => spec_repository(spec_path, spec)?,
    };
    let commits = git::first_parent_range(&repository, good, bad)?;
    let builds = commits
        .iter()
        .map(|sha| Build {
            label: sha[..sha.len().min(12)].to_owned(),
            name: sha.clone(),
            set: format!("source.commit={sha}"),
            revision: sha.clone(),
        })
        .collect();
    Ok((builds, "commit"))
}

/// The published versions from `good` to `bad` of the spec's package, each build the
/// spec with its `version` overridden.
fn published_versions(
    spec_path: &Path,
    spec: &Spec,
    good: &str,
    bad: &str,
) -> Result<Vec<Build>, BuildsError> {
    let package = spec
        .package
        .as_ref()
        .ok_or_else(|| BuildsError::NoPackage {
            spec: spec_path.to_path_buf(),
        })?;
    let versions = versions::between(&Npm::default(), package, good, bad)?;
    Ok(versions
        .into_iter()
        .map(|version| Build {
            label: version.clone(),
            name: version.clone(),
            set: format!("version={version}"),
            // What run and ab record as request.sha for a package at a version.
            revision: format!("{package}@{version}"),
        })
        .collect())
}

/// The spec's `source.repository`, relative to the spec's folder when relative.
fn spec_repository(spec_path: &Path, spec: &Spec) -> Result<PathBuf, BuildsError> {
    let source = spec.source.as_ref().ok_or_else(|| BuildsError::NoSource {
        spec: spec_path.to_path_buf(),
    })?;
    let path = PathBuf::from(&source.repository);
    let path = if path.is_absolute() {
        path
    } else {
        spec_path.parent().unwrap_or(Path::new(".")).join(path)
    };
    if !path.is_dir() {
        return Err(BuildsError::NotLocal {
            repository: source.repository.clone(),
        });
    }
    Ok(path)
}

/// The phases a metric needs: prepare and install build and install it, then its own.
pub fn phases_for(metric: Metric) -> Vec<Phase> {
    let own = metric.phase();
    let mut phases = vec![Phase::Prepare];
    if own != Phase::Prepare {
        phases.push(Phase::Install);
    }
    if !phases.contains(&own) {
        phases.push(own);
    }
    phases
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_metric_gets_the_phases_that_build_install_and_measure_it() {
        assert_eq!(
            phases_for(Metric::Cold),
            [Phase::Prepare, Phase::Install, Phase::Measure]
        );
        for metric in Metric::ALL {
            let phases = phases_for(metric);
            assert_eq!(phases[0], Phase::Prepare);
            assert_eq!(phases.last(), Some(&metric.phase()));
        }
    }
}
