//! The reference kernel shipped with clibench.

/// The Python source of the reference kernel (`crates/bench-term/kernel/reference_kernel.py`):
/// a protocol-3 kernel using only the Python 3 standard library. Write it to a file and
/// run it with `python3 FILE`.
pub const REFERENCE_KERNEL: &str = include_str!("../../kernel/reference_kernel.py");

/// A file name to write [`REFERENCE_KERNEL`] under.
pub const REFERENCE_KERNEL_FILE_NAME: &str = "clibench_reference_kernel.py";
