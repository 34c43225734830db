//! [`check`]: every section's checks, in the order of the spec's keys.

use super::checker::{Checker, Problem, Ready};
use super::{compare, install, measure, phases, prepare, session};
use crate::spec::model::Spec;

/// The problems of `spec` in the order of its keys, and its `[measure]` ready keys
/// resolved (`None` without a `[measure]`; meaningless when there are problems).
pub(in crate::spec) fn check(spec: &Spec) -> (Vec<Problem>, Option<Ready>) {
    let mut c = Checker::new(spec);
    prepare::top_level(&mut c, spec);
    prepare::build(&mut c, spec);
    prepare::served(&mut c, spec);
    install::install(&mut c, &spec.install);
    install::workspace(&mut c, &spec.workspace);
    let ready = spec
        .measure
        .as_ref()
        .and_then(|measure| measure::measure(&mut c, spec, measure));
    if let Some(runtime) = &spec.runtime {
        phases::runtime(&mut c, runtime);
    }
    if let Some(ui) = &spec.ui {
        phases::ui(&mut c, spec, ui);
    }
    compare::compare(&mut c, &spec.compare);
    if let Some(staircase) = &spec.staircase {
        phases::staircase(&mut c, spec, staircase);
    }
    if let Some(session) = &spec.session {
        session::session(&mut c, spec, session, ready.as_ref());
        session::limits(&mut c, session);
    }
    (c.problems, ready)
}
