//! Drives a protocol-3 REPL kernel with `bench-term`, the way another Rust tool (an
//! agent runtime's test suite, a CI job) would embed the client: start the kernel in its
//! own session, run cells, interrupt one stuck in an `await`, snapshot the namespace,
//! restore it into a fresh kernel, check the values, and close both.
//!
//! ```text
//! cargo run --example kernel_roundtrip [-- KERNEL COMMAND...]
//! ```
//!
//! Without a command it runs the reference kernel shipped with bench-term (`python3`).

use bench_core::error_chain;
use bench_core::units::{format_bytes, format_seconds};
use bench_term::kernel::measure::{INTERRUPT_AWAIT, interrupt_latency};
use bench_term::kernel::{
    Kernel, KernelOptions, REFERENCE_KERNEL, REFERENCE_KERNEL_FILE_NAME, Request, Snapshot,
};
use serde_json::Value;
use std::process::ExitCode;

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(mut command: Vec<String>) -> Result<(), String> {
    let folder = tempfile::tempdir().map_err(|e| format!("temporary folder: {e}"))?;
    if command.is_empty() {
        let script = folder.path().join(REFERENCE_KERNEL_FILE_NAME);
        std::fs::write(&script, REFERENCE_KERNEL).map_err(|e| error_chain(&e))?;
        command = vec!["python3".to_owned(), script.display().to_string()];
        println!("kernel: python3 {REFERENCE_KERNEL_FILE_NAME} (the reference kernel)");
    } else {
        println!("kernel: {}", command.join(" "));
    }
    let env: Vec<(String, String)> = ["PATH", "HOME", "VIRTUAL_ENV", "PYTHONPATH"]
        .iter()
        .filter_map(|key| {
            std::env::var(key)
                .ok()
                .map(|value| ((*key).to_owned(), value))
        })
        .chain([("LANG".to_owned(), "C.UTF-8".to_owned())])
        .collect();
    let options = KernelOptions::new(&command[0], &command[1..], folder.path(), env);

    let mut kernel = Kernel::spawn(options.clone()).map_err(|e| error_chain(&e))?;
    let ready = kernel.ready().map_err(|e| error_chain(&e))?;
    println!(
        "ready: python {} in {}",
        ready.python,
        format_seconds(ready.elapsed.as_secs_f64())
    );

    let reply = kernel
        .execute("numbers = list(range(10))\ntable = {'rows': 3, 'name': 'demo'}\nprint('hello from the kernel')\nsum(numbers)")
        .map_err(|e| error_chain(&e))?;
    println!(
        "execute: result {} in {}",
        reply.result().unwrap_or("(none)"),
        format_seconds(reply.elapsed.as_secs_f64())
    );
    print!("stdout: {}", reply.stdout());

    let latency = interrupt_latency(&mut kernel, INTERRUPT_AWAIT).map_err(|e| error_chain(&e))?;
    println!(
        "interrupt: KeyboardInterrupt {} after the request, and the next cell ran",
        format_seconds(latency.as_secs_f64())
    );

    let state = folder.path().join("state.pkl");
    let reply = kernel
        .request(&Request::Snapshot(Snapshot {
            path: state.clone(),
            manifest_path: folder.path().join("manifest.json"),
            ..Snapshot::default()
        }))
        .map_err(|e| error_chain(&e))?;
    let saved = reply.done.strings("saved").unwrap_or_default();
    let bytes = reply
        .done
        .fields
        .get("bytes")
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    println!(
        "snapshot: saved {} ({}) in {}",
        saved.join(", "),
        format_bytes(bytes),
        format_seconds(reply.elapsed.as_secs_f64())
    );
    let closed = kernel.close().map_err(|e| error_chain(&e))?;
    println!("closed: {closed}");

    let mut fresh = Kernel::spawn(options).map_err(|e| error_chain(&e))?;
    fresh.ready().map_err(|e| error_chain(&e))?;
    let reply = fresh
        .request(&Request::Restore {
            path: state.clone(),
        })
        .map_err(|e| error_chain(&e))?;
    let restored = reply.done.strings("restored").unwrap_or_default();
    let check = fresh
        .execute("(sum(numbers), table['name'])")
        .map_err(|e| error_chain(&e))?;
    if check.result() != Some("(45, 'demo')") {
        return Err(format!("restored values differ: {:?}", check.result()));
    }
    println!(
        "restore: restored {} in {}; values match",
        restored.join(", "),
        format_seconds(reply.elapsed.as_secs_f64())
    );
    let names = fresh
        .request(&Request::ListNames)
        .map_err(|e| error_chain(&e))?
        .done
        .strings("names")
        .unwrap_or_default();
    println!("list_names: {}", names.join(", "));
    let closed = fresh.close().map_err(|e| error_chain(&e))?;
    println!("closed: {closed}");
    Ok(())
}
