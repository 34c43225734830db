//! The HTML report in a real browser: headless Chromium (Debian's `chromium`,
//! installed by `.ci/run`) loads the demo-like report and a probe reports what it
//! rendered; a proxy that Chromium must use for every request counts what the page
//! fetched.
//!
//! Without Chromium the tests skip with a message on stderr; under CI (`CI=true`)
//! a missing Chromium is a failure, since CI installs it.

use crate::html::{HOSTILE, TRIALS, demo_like, session_like};
use bench_core::export::html;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Chromium's program, or `None` (after saying so) when it is not installed.
fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser"]
        .into_iter()
        .find_map(|name| {
            std::env::var_os("PATH").and_then(|path| {
                std::env::split_paths(&path)
                    .map(|dir| dir.join(name))
                    .find(|candidate| candidate.is_file())
            })
        });
    if found.is_none() {
        assert!(
            std::env::var("CI").map_or(true, |ci| ci != "true"),
            "chromium is not installed, but CI installs it (.ci/run)"
        );
    }
    found
}

/// A proxy that answers nothing and records the first line of every request.
struct Canary {
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Canary {
    fn start() -> Canary {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
                let mut line = String::new();
                let _ = BufReader::new(&stream).read_line(&mut line);
                seen.lock().unwrap().push(line.trim().to_string());
            }
        });
        Canary { port, requests }
    }

    /// The requests, less those Chromium makes for itself whatever the page (its
    /// component updater, account check and, from Debian's Chromium 148 on, a
    /// connection to www.google.com at start that no flag silences). The hosts are
    /// matched exactly, so a page that fetched a font from another Google host would
    /// still be caught.
    fn page_requests(&self) -> Vec<String> {
        const BROWSER_SERVICES: [&str; 4] = [
            "update.googleapis.com",
            "accounts.google.com",
            "clients2.google.com",
            "www.google.com",
        ];
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|request| !BROWSER_SERVICES.contains(&request_host(request)))
            .cloned()
            .collect()
    }
}

/// The host of a proxy request line: `CONNECT host:443 HTTP/1.1` or
/// `GET http://host/path HTTP/1.1`.
fn request_host(line: &str) -> &str {
    let target = line.split(' ').nth(1).unwrap_or_default();
    let target = target.split_once("://").map_or(target, |(_, rest)| rest);
    let end = target.find([':', '/']).unwrap_or(target.len());
    &target[..end]
}

#[test]
fn request_hosts_are_read_from_both_kinds_of_proxy_request() {
    assert_eq!(
        request_host("CONNECT accounts.google.com:443 HTTP/1.1"),
        "accounts.google.com"
    );
    assert_eq!(
        request_host("GET http://fonts.googleapis.com/css HTTP/1.1"),
        "fonts.googleapis.com"
    );
    assert_eq!(request_host(""), "");
}

/// Loads `page` in headless Chromium with every request sent to `canary`, and
/// returns the DOM after the page's load (and its scripts) finished.
fn dump_dom(chromium: &Path, page: &Path, canary: &Canary) -> String {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--disable-default-apps",
            "--disable-client-side-phishing-detection",
            "--disable-domain-reliability",
            "--disable-breakpad",
            "--metrics-recording-only",
            "--password-store=basic",
            "--use-mock-keychain",
            "--disable-features=Translate,MediaRouter,OptimizationHints,NetworkTimeServiceQuerying",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--proxy-server=http://127.0.0.1:{}", canary.port))
        // Without this, Chromium would not send these hosts to the proxy.
        .arg("--proxy-bypass-list=<-loopback>")
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).unwrap();
        text
    });
    // A bound on a hung browser, not a speed expectation.
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(180) {
            let _ = child.kill();
            panic!("chromium did not finish loading {}", page.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().unwrap()
}

/// Measures, in the browser, what each chart rendered, and writes it as JSON into
/// `<pre id="probe">` for `--dump-dom` to show.
const PROBE: &str = r#"<script>
window.addEventListener('load', () => {
  const loaders = 'img,image,iframe,object,embed,video,audio,source,link,use,[src],[href],[srcset],[data]';
  const out = { loaders: [...document.querySelectorAll(loaders)].map(e => e.outerHTML),
                css_urls: [...document.styleSheets].flatMap(s => [...s.cssRules])
                  .map(r => r.cssText).filter(t => t.includes('url(') || t.includes('@import')),
                scripts: document.scripts.length, figures: {},
                screen: (document.querySelector('pre.screen') || {}).textContent || '' };
  for (const fig of document.querySelectorAll('figure')) {
    const svg = fig.querySelector('svg');
    const marks = fig.querySelector('g.marks');
    const drawn = sel => marks ? [...marks.querySelectorAll(sel)]
      .filter(e => { const b = e.getBBox(); return b.width > 0 || b.height > 0; }).length : 0;
    const box = svg.getBoundingClientRect();
    out.figures[fig.id] = {
      width: box.width, height: box.height,
      circles: drawn('circle'), polylines: drawn('polyline'), rects: drawn('rect'),
      texts: [...svg.querySelectorAll('text')]
        .filter(t => t.getComputedTextLength() > 0).map(t => t.textContent.trim()),
      title: (svg.querySelector('title') || {}).textContent || '' };
  }
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"#;

/// The probe's JSON out of a dumped DOM.
fn probe_of(dom: &str) -> serde_json::Value {
    let start = dom.find("<pre id=\"probe\">").expect("the probe ran") + "<pre id=\"probe\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let text = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&");
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{error}: {text}"))
}

#[test]
fn every_chart_renders_with_its_data_in_chromium() {
    let Some(chromium) = chromium() else {
        bench_core::skip_test!(
            "chromium is not installed; the HTML report was not tested in a browser (apt-get install chromium)"
        );
    };
    let folder = tempfile::tempdir().unwrap();
    let page = html::report(&demo_like());
    // The page as shipped, plus the probe; the probe needs scripts, which the
    // page's Content-Security-Policy forbids, so that one line is dropped.
    let policy = page
        .lines()
        .find(|line| line.contains("Content-Security-Policy"))
        .expect("the page has a policy");
    let probed = page
        .replace(policy, "")
        .replace("</body>", &format!("{PROBE}</body>"));
    let path = folder.path().join("probed.html");
    std::fs::write(&path, probed).unwrap();
    let canary = Canary::start();
    let probe = probe_of(&dump_dom(&chromium, &path, &canary));

    // After parsing, no element or style rule can load anything: a hostile `<img src>`
    // in the screen would show here if it were not escaped.
    assert_eq!(
        probe["loaders"],
        serde_json::json!([]),
        "elements that load"
    );
    assert_eq!(
        probe["css_urls"],
        serde_json::json!([]),
        "style rules that load"
    );
    assert_eq!(probe["scripts"], 1, "a script other than the probe ran");
    assert!(probe["screen"].as_str().unwrap().contains(HOSTILE));
    let trials = u64::from(TRIALS);
    let figure = |id: &str| {
        let figure = &probe["figures"][id];
        assert!(figure["width"].as_f64().unwrap() > 300.0, "{id}: {figure}");
        assert!(figure["height"].as_f64().unwrap() > 50.0, "{id}: {figure}");
        assert!(!figure["title"].as_str().unwrap().is_empty(), "{id}");
        figure.clone()
    };
    let has_text = |figure: &serde_json::Value, text: &str| {
        figure["texts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t.as_str() == Some(text))
    };
    let ready = figure("chart-ready");
    assert_eq!(ready["circles"], 2 * trials, "{ready}");
    assert_eq!(ready["polylines"], 2, "{ready}");
    assert!(
        has_text(&ready, "time to ready") && has_text(&ready, "trial"),
        "{ready}"
    );
    assert!(has_text(&ready, "400 ms"), "{ready}");
    for session in ["cold", "warm", "ui"] {
        let memory = figure(&format!("chart-memory-{session}"));
        assert_eq!(memory["polylines"], trials, "{memory}");
        assert_eq!(memory["circles"], trials, "{memory}");
        assert!(has_text(&memory, "seconds since spawn"), "{memory}");
    }
    let processes = figure("chart-processes");
    assert!(processes["rects"].as_u64().unwrap() >= 3, "{processes}");
    assert!(has_text(&processes, "agent-daemon (5139)"), "{processes}");
    let staircase = figure("chart-staircase");
    assert_eq!(staircase["rects"], 1 + 3 * 2 + 1, "{staircase}");
    assert!(has_text(&staircase, "stopped"), "{staircase}");
}

#[test]
fn the_report_fetches_nothing_while_a_page_that_does_is_caught() {
    let Some(chromium) = chromium() else {
        bench_core::skip_test!(
            "chromium is not installed; the HTML report was not tested in a browser (apt-get install chromium)"
        );
    };
    let folder = tempfile::tempdir().unwrap();
    let report = folder.path().join("report.html");
    std::fs::write(&report, html::report(&demo_like())).unwrap();
    let canary = Canary::start();
    let dom = dump_dom(&chromium, &report, &canary);
    assert!(
        dom.contains("<figure id=\"chart-ready\">"),
        "the page did not load"
    );
    assert_eq!(canary.page_requests(), Vec::<String>::new());

    // The control: the same check catches a page that fetches an image.
    let leaky = folder.path().join("leaky.html");
    std::fs::write(
        &leaky,
        "<!DOCTYPE html><html><body><img src=\"http://clibench.invalid/pixel.png\"></body></html>",
    )
    .unwrap();
    let canary = Canary::start();
    dump_dom(&chromium, &leaky, &canary);
    let requests = canary.page_requests();
    assert!(
        requests.iter().any(|r| r.contains("clibench.invalid")),
        "the canary saw {requests:?}"
    );
}

#[test]
fn the_board_draws_a_chart_per_row_group_and_every_targets_turns_in_chromium() {
    let Some(chromium) = chromium() else {
        bench_core::skip_test!(
            "chromium is not installed; board.html was not tested in a browser (apt-get install chromium)"
        );
    };
    use bench_core::board::{Board, Entry};
    let light = session_like();
    // The same agent, twice as slow to start and twice as heavy.
    let mut heavy = session_like();
    for (metric, samples) in heavy.side.metrics.iter_mut() {
        if matches!(metric, bench_core::Metric::Cold | bench_core::Metric::Pss) {
            for sample in samples {
                sample.value = sample.value.map(|v| v * 2.0);
            }
        }
    }
    let board = Board::new(
        &[
            Entry::new("light", &light.side),
            Entry::new(HOSTILE, &heavy.side),
        ],
        Vec::new(),
    );
    let page = html::board(&board, &[&light.side, &heavy.side]);
    let folder = tempfile::tempdir().unwrap();
    let policy = page
        .lines()
        .find(|line| line.contains("Content-Security-Policy"))
        .expect("the page has a policy");
    let probed = page
        .replace(policy, "")
        .replace("</body>", &format!("{PROBE}</body>"));
    let path = folder.path().join("board.html");
    std::fs::write(&path, probed).unwrap();
    let canary = Canary::start();
    let probe = probe_of(&dump_dom(&chromium, &path, &canary));
    assert_eq!(
        probe["loaders"],
        serde_json::json!([]),
        "elements that load"
    );
    assert_eq!(probe["scripts"], 1, "a script other than the probe ran");
    let figures = probe["figures"].as_object().unwrap();
    // Start-up and memory have rows; each is one bar per target per metric.
    for (group, metrics) in [("chart-board-1", 2), ("chart-board-2", 2)] {
        let figure = &figures[group];
        assert!(
            figure["width"].as_f64().unwrap() > 300.0,
            "{group}: {figure}"
        );
        assert!(
            figure["rects"].as_u64().unwrap() >= 2 * metrics,
            "{group}: {figure}"
        );
        assert!(
            figure["texts"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t == "times the best"),
            "{group}: {figure}"
        );
    }
    let turns = &figures["chart-board-turns"];
    assert_eq!(turns["polylines"], 2, "one line per target: {turns}");
    assert!(turns["circles"].as_u64().unwrap() >= 6, "{turns}");
    assert!(
        canary.page_requests().is_empty(),
        "{:?}",
        canary.page_requests()
    );
}
