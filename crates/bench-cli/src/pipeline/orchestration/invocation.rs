//! The identifier of one `clibench run` or `ab` invocation, written into the request of
//! every result it starts, so that the history knows which results were measured side
//! by side: two builds compared within one invocation share its offset (the machine's
//! load, its caches, the hour), two from different invocations do not.

use crate::pipeline::Error;
use bench_core::{Request, ResultFile, Side};
use std::io::Read;
use std::path::Path;

/// Random bytes in an identifier: 64 bits, so that two invocations anywhere never share
/// one by chance in any store's lifetime.
const ID_BYTES: usize = 8;

/// A new invocation identifier: 16 hex digits from the kernel's random source.
pub fn new_id() -> Result<String, Error> {
    let mut bytes = [0u8; ID_BYTES];
    let source = Path::new("/dev/urandom");
    std::fs::File::open(source)
        .and_then(|mut file| file.read_exact(&mut bytes))
        .map_err(|source_error| Error::Io {
            action: "read",
            path: source.to_path_buf(),
            source: source_error,
        })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Starts `OUT/result.json` for `request` with invocation `id`, before any phase runs:
/// every phase (in this process or a re-run child) loads the file it finds and keeps
/// its request, so the identifier reaches the result without being passed to each one.
/// The folder holds no result at this point (an earlier run's was set aside). Returns the
/// side the result starts with.
pub fn start_result(out: &Path, request: &Request, id: &str) -> Result<Side, Error> {
    let mut request = request.clone();
    request.invocation_id = Some(id.to_owned());
    let path = out.join("result.json");
    let result = ResultFile::new(request);
    result
        .save(&path)
        .map_err(|source| Error::ResultSave { path, source })?;
    Ok(result.side)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_new_each_time() {
        let (one, two) = (new_id().unwrap(), new_id().unwrap());
        assert_eq!(one.len(), 2 * ID_BYTES);
        assert!(one.chars().all(|c| c.is_ascii_hexdigit()), "{one}");
        assert_ne!(one, two);
    }

    #[test]
    fn a_started_result_carries_the_identifier_and_loads() {
        let dir = tempfile::tempdir().unwrap();
        let request = Request::new("abc", bench_core::Role::Candidate);
        start_result(dir.path(), &request, "0123456789abcdef").unwrap();
        let loaded = ResultFile::load(&dir.path().join("result.json")).unwrap();
        assert_eq!(
            loaded.request.invocation_id.as_deref(),
            Some("0123456789abcdef")
        );
        assert_eq!(loaded.request.sha, "abc");
    }
}
