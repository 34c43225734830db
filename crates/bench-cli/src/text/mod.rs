//! The lines the binary prints: what `clibench run` and `ab` tell when they are done
//! ([`summary`]), the progress lines a person watching a run reads ([`progress`]), and
//! what `clibench history` ([`history`]) and `bisect` ([`bisect`]) tell. They are built
//! here, apart from printing, so that they are tested as text; the library returns
//! facts and never words them for a terminal.

pub(crate) mod bisect;
pub(crate) mod history;
pub(crate) mod progress;
pub(crate) mod summary;
