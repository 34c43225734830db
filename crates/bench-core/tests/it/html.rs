//! The HTML report of a demo-like result: every chart with its data, hostile text
//! escaped, nothing fetched from anywhere.

use crate::example;
use bench_core::ProcessRole;
use bench_core::compare::{CompareOptions, compare};
use bench_core::detail::{
    MemoryPoint, MemorySeries, Screen, SessionRun, SessionTurn, StaircaseInstance, StaircaseRun,
    StaircaseStep,
};
use bench_core::export::html;
use bench_core::{Metric, Observation, Phase, ProcessMemory, ResultFile};

/// Trials of the demo-like result.
pub const TRIALS: u32 = 5;
/// A string a hostile target could put in its process name or on its screen.
pub const HOSTILE: &str = "<script>alert('owned')</script><img src=x onerror=alert(1)>";

/// The shipped candidate example, grown into what `clibench run` records for a
/// demo-like agent: five trials, memory over time of every start and UI session,
/// the screen at ready, a staircase, and a process with a hostile name.
pub fn demo_like() -> ResultFile {
    let mut result = example("candidate");
    let side = &mut result.side;
    let cold = [0.412, 0.398, 0.431, 0.405, 0.47];
    let warm = [0.201, 0.188, 0.212, 0.195, 0.199];
    side.metrics.insert(
        Metric::Cold,
        cold.iter()
            .enumerate()
            .map(|(trial, &s)| Observation::value(trial as u32, s))
            .collect(),
    );
    side.metrics.insert(
        Metric::Warm,
        warm.iter()
            .enumerate()
            .map(|(trial, &s)| Observation::value(trial as u32, s))
            .collect(),
    );
    side.metrics.insert(
        Metric::InstanceRss,
        vec![Observation::value(0, 48.0 * 1048576.0)],
    );
    side.metrics.insert(
        Metric::ReclaimedRss,
        vec![Observation::value(0, 150.0 * 1048576.0)],
    );
    side.runtime
        .insert("memory_bytes".into(), "25276059648".into());
    for trial in 0..TRIALS {
        for (session, phase, ready) in [
            ("cold", Phase::Measure, cold[trial as usize]),
            ("warm", Phase::Measure, warm[trial as usize]),
            ("ui", Phase::Ui, 0.4),
        ] {
            let ready_ms = (ready * 1000.0) as u64;
            let points = (0..60)
                .map(|i| {
                    let t_ms = i * 25;
                    // Memory grows until ready, then levels off near 130 MiB.
                    let level = (t_ms as f64 / ready_ms as f64).min(1.0);
                    let rss = (8.0 + 122.0 * level + f64::from(trial)) * 1048576.0;
                    MemoryPoint {
                        t_ms,
                        rss_bytes: rss as u64,
                        pss_bytes: Some((rss * 0.8) as u64),
                    }
                })
                .collect();
            side.memory_series.push(MemorySeries::from_points(
                phase,
                trial,
                session,
                Some(ready_ms),
                points,
            ));
        }
    }
    side.screens.push(Screen::new(
        Phase::Measure,
        0,
        "cold",
        // Drawn in the middle of a tall terminal: six blank rows, then indented text.
        format!(
            "{}        demo agent v1.0\n\n        > ready\n        {HOSTILE}\n",
            format!("{}\n", " ".repeat(100)).repeat(6)
        ),
    ));
    let mib = |n: u64| n << 20;
    side.staircases.push(StaircaseRun {
        trial: 0,
        baseline_rss_bytes: mib(131),
        steps: (1..=3)
            .map(|instances| StaircaseStep {
                instances,
                rss_bytes: mib(131 + 48 * u64::from(instances)),
                pss_bytes: Some(mib(100 + 30 * u64::from(instances))),
                rss_delta_bytes: 48 << 20,
                pss_delta_bytes: Some(30 << 20),
                uss_delta_bytes: None,
                process_count: Some(instances),
            })
            .collect(),
        after_teardown_rss_bytes: mib(125),
        reclaimed_rss_bytes: 150 << 20,
        reclaimed_pss_bytes: None,
        after_teardown_process_count: None,
        average: None,
        steady: None,
        instance: StaircaseInstance::Session,
    });
    let mut processes = side.processes.clone();
    processes.push(ProcessMemory {
        pid: 4242,
        ppid: None,
        name: HOSTILE.to_string(),
        rss: mib(12),
        pss: Some(mib(9)),
        uss: None,
        swap: None,
        cpu_seconds: None,
        threads: None,
        cmdline: Some(format!("/usr/bin/helper --serve {HOSTILE}")),
        role: Some(ProcessRole::Daemon),
    });
    side.set_processes(processes);
    result
        .validate()
        .unwrap_or_else(|error| panic!("the demo-like result is invalid: {error}"));
    result
}

/// The part of `html` inside the element with `id`, up to the figure's end.
pub fn figure<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<figure id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no figure {id}"));
    let end = start + html[start..].find("</figure>").expect("a closed figure");
    &html[start..end]
}

/// How many `tag` elements a figure's data marks have.
pub fn marks(figure: &str, tag: &str) -> usize {
    let start = figure.find("<g class=\"marks\">").expect("a marks group");
    figure[start..].matches(&format!("<{tag} ")).count()
}

#[test]
fn every_chart_is_drawn_with_its_data() {
    let result = demo_like();
    let page = html::report(&result);
    let trials = TRIALS as usize;
    let ready = figure(&page, "chart-ready");
    assert_eq!(
        marks(ready, "circle"),
        2 * trials,
        "a dot per cold and warm start"
    );
    assert_eq!(
        marks(ready, "polyline"),
        2,
        "a median line for cold and for warm"
    );
    for session in ["cold", "warm", "ui"] {
        let memory = figure(&page, &format!("chart-memory-{session}"));
        assert_eq!(
            marks(memory, "polyline"),
            trials,
            "{session}: a line per trial"
        );
        assert_eq!(
            marks(memory, "circle"),
            trials,
            "{session}: a ready mark per trial"
        );
        assert!(memory.contains("resident memory (MiB)"));
    }
    let processes = figure(&page, "chart-processes");
    let with_pss = result
        .side
        .processes
        .iter()
        .filter(|p| p.pss.is_some())
        .count();
    assert_eq!(
        marks(processes, "rect"),
        result.side.processes.len() + with_pss
    );
    let staircase = figure(&page, "chart-staircase");
    // Before, three steps (each with its PSS bar), after stopping.
    assert_eq!(marks(staircase, "rect"), 1 + 3 * 2 + 1);
    assert!(staircase.contains("+48.0 MiB"));
    assert!(staircase.contains("150.0 MiB given back"));
    assert!(
        page.contains("each instance after one scripted turn"),
        "the staircase's caption says what kind of instance it measured"
    );
}

#[test]
fn text_from_the_target_is_escaped() {
    let page = html::report(&demo_like());
    assert!(
        !page.to_lowercase().contains("<script"),
        "a live script tag"
    );
    assert!(!page.contains("<img"), "a live img tag");
    assert!(page.contains("&lt;script&gt;alert(&#39;owned&#39;)&lt;/script&gt;"));
    // The process name is drawn by the SVG backend, which escapes it too.
    assert!(page.contains("&lt;script&gt;alert(&apos;owned&apos;)"));
}

#[test]
fn the_page_references_nothing_outside_itself() {
    for page in [
        html::report(&demo_like()),
        html::comparison(&compare(
            &example("base").side,
            &example("candidate").side,
            &CompareOptions::default(),
        )),
    ] {
        for needle in ["url(", "@import", "<link", "<script", "<img", "https:"] {
            assert!(!page.contains(needle), "the page has `{needle}`");
        }
        // No element has an attribute that loads something (the hostile text has
        // `src=` in it, but only as escaped text, outside any tag).
        for tag in page
            .split('<')
            .skip(1)
            .filter_map(|rest| rest.split('>').next())
        {
            for attribute in [" src=", " href=", " xlink:href=", " srcset=", " data="] {
                assert!(!tag.contains(attribute), "<{tag}> loads something");
            }
        }
        // The only absolute URL is the SVG namespace, which no browser fetches.
        let urls = page.matches("http://").count();
        let namespaces = page.matches("xmlns=\"http://www.w3.org/2000/svg\"").count();
        assert_eq!(urls, namespaces);
        assert!(page.contains("Content-Security-Policy\" content=\"default-src 'none'"));
    }
}

#[test]
fn byte_facts_are_shown_with_units() {
    let page = html::report(&demo_like());
    assert!(page.contains("<td><code>memory_bytes</code></td><td>23.5 GiB</td>"));
    assert!(!page.contains("25276059648"));
}

#[test]
fn the_host_facts_say_the_load_the_trials_started_under() {
    let mut result = demo_like();
    for (trial, load) in [(0, 1.5), (1, 3.25)] {
        let record = result.side.trial_record_mut(Phase::Measure, trial);
        record.load_average = Some([load, 1.0, 0.5]);
    }
    let page = html::report(&result);
    assert!(
        page.contains(
            "<td><code>load_average</code></td><td>1.50 to 3.25 (1 min, at the start of the \
             trials)</td>"
        ),
        "{page}"
    );
}

#[test]
fn a_start_named_session_is_headed_once() {
    let mut result = demo_like();
    for series in &mut result.side.memory_series {
        if series.session == "ui" {
            series.session = "session".to_owned();
        }
    }
    let page = html::report(&result);
    assert!(page.contains("<h3>session</h3>"), "{page}");
    assert!(page.contains("<h3>cold session</h3>"), "{page}");
    assert!(!page.contains("session session"), "{page}");
}

#[test]
fn metric_names_carry_their_glossary_as_a_tooltip() {
    let page = html::report(&demo_like());
    let tooltip = format!("<abbr title=\"{}", html::escape(Metric::Cold.description()));
    assert!(page.contains(&tooltip));
    assert!(page.contains("<dt><code>reclaimed_rss</code>"));
    // Only the metrics the result has are explained.
    assert!(!page.contains("<dt><code>mixed</code>"));
}

#[test]
fn comparison_draws_each_change_with_its_interval() {
    let comparison = compare(
        &example("base").side,
        &example("candidate").side,
        &CompareOptions::default(),
    );
    let page = html::comparison(&comparison);
    let chart = figure(&page, "chart-changes");
    let finite = comparison
        .metrics
        .iter()
        .filter(|row| row.ratio.is_finite())
        .count();
    assert!(finite > 0);
    assert_eq!(marks(chart, "circle"), finite, "a dot per metric");
    assert_eq!(marks(chart, "polyline"), finite, "a whisker per metric");
    let with_floor = comparison
        .metrics
        .iter()
        .filter(|row| row.ratio.is_finite() && row.floor > 0.0)
        .count();
    assert!(with_floor > 0);
    assert_eq!(
        marks(chart, "rect"),
        with_floor,
        "a noise band per metric with a floor"
    );
    assert!(chart.contains("noise floor"));
}

#[test]
fn comparison_rows_say_what_they_could_detect_and_the_trials_that_would_do() {
    let options = CompareOptions {
        interleaving: Some(bench_core::compare::Interleaving::Interleaved),
        ..CompareOptions::default()
    };
    let comparison = compare(&example("base").side, &example("candidate").side, &options);
    let page = html::comparison(&comparison);
    assert!(page.contains("<th>Could detect</th>"));
    // The count is for the rows without a verdict: a regressed row has its answer.
    let targets: Vec<_> = comparison
        .metrics
        .iter()
        .filter(|row| !row.verdict.is_reported())
        .filter_map(|row| row.trials_for_target)
        .collect();
    assert!(!targets.is_empty(), "5 noisy trials a side detect no ±6%");
    for target in targets {
        let change = (target.change * 100.0).round();
        let cell = match target.trials {
            Some(trials) => format!("(±{change}% needs ~{trials} trials)</td>"),
            None => format!("(±{change}% needs over 101 trials)</td>"),
        };
        assert!(page.contains(&cell), "no `{cell}` in the page");
    }
    assert!(
        page.contains("<td>every byte</td>"),
        "an exact size shows every byte"
    );
}

/// The page's outline (headings and chart ids), so a reordered or lost section shows.
#[test]
fn report_skeleton() {
    let page = html::report(&demo_like());
    let outline: Vec<&str> = page
        .lines()
        .filter(|line| {
            line.starts_with("<h1")
                || line.starts_with("<h2")
                || line.starts_with("<section")
                || line.starts_with("<figure")
        })
        .collect();
    insta::assert_snapshot!(outline.join("\n"));
}

/// The (x, y) corners of a figure's first data polyline.
fn first_polyline(figure: &str) -> Vec<(f64, f64)> {
    let start = figure.find("<g class=\"marks\">").expect("a marks group");
    let line = &figure[start..][figure[start..].find("<polyline").expect("a polyline")..];
    let points = &line[line.find("points=\"").expect("points") + 8..];
    let points = &points[..points.find('"').expect("closed points")];
    points
        .split_whitespace()
        .map(|pair| {
            let (x, y) = pair.split_once(',').expect("x,y");
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect()
}

#[test]
fn memory_is_drawn_as_steps() {
    let page = html::report(&demo_like());
    let corners = first_polyline(figure(&page, "chart-memory-cold"));
    assert!(corners.len() > 10, "{corners:?}");
    // Corners alternate: a held value (same y), then a jump at the next sample (same x).
    for (index, pair) in corners.windows(2).enumerate() {
        if index % 2 == 0 {
            assert_eq!(pair[0].1, pair[1].1, "held at corner {index}: {corners:?}");
        } else {
            assert_eq!(pair[0].0, pair[1].0, "jump at corner {index}: {corners:?}");
        }
    }
}

#[test]
fn the_screen_at_ready_is_cropped_to_its_text() {
    let page = html::report(&demo_like());
    let start =
        page.find("<pre class=\"screen\">").expect("a screen") + "<pre class=\"screen\">".len();
    let screen = &page[start..start + page[start..].find("</pre>").unwrap()];
    // One row of margin above the four rows of text (the six blank rows above are cut),
    // and two columns of margin left of the text (the eight-column indent is cut).
    assert_eq!(screen.split('\n').count(), 5, "{screen}");
    assert!(screen.starts_with("\n  demo agent v1.0\n"), "{screen}");
}

#[test]
fn who_holds_the_memory_names_roles_and_command_lines() {
    let page = html::report(&demo_like());
    let section = &page[page.find("<section id=\"processes\">").unwrap()..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(section.contains("<th>Role</th>"), "{section}");
    assert!(
        section.contains("<td>daemon</td>")
            && section.contains("<code>/usr/bin/helper --serve &lt;script&gt;"),
        "{section}"
    );
}

/// The demo-like result with a session of two trials × three turns, turn 2 with a tool
/// call, memory growing 1 MiB per turn, and a hostile dialect name.
pub fn session_like() -> ResultFile {
    let mut result = demo_like();
    let side = &mut result.side;
    for trial in 0..2u32 {
        let slow = f64::from(trial) * 0.1;
        let turns = (1..=3u32)
            .map(|turn| {
                let tool = turn == 2;
                SessionTurn {
                    turn,
                    turn_seconds: 0.8 + slow + if tool { 0.5 } else { 0.0 },
                    submit_seconds: Some(0.004),
                    first_token_seconds: Some(0.011),
                    stream_render_seconds: Some(0.009),
                    tool_roundtrip_seconds: tool.then_some(0.21),
                    cpu_seconds: 0.05,
                    rss_bytes: (100 + u64::from(turn)) << 20,
                    pss_bytes: Some((60 + u64::from(turn)) << 20),
                    typing_lag_seconds: vec![0.003],
                    first_chunk_at_seconds: Some(if tool { 0.32 } else { 0.1 }),
                    last_chunk_at_seconds: Some(if tool { 1.1 } else { 0.7 } + slow),
                    tool_call_at_seconds: tool.then_some(0.05),
                    output: None,
                    bytes_per_token: None,
                }
            })
            .collect();
        side.sessions.push(SessionRun {
            trial,
            dialect: "<b>anthropic</b>".into(),
            turns,
            growth_bytes_per_turn: Some(1048576.0),
            idle_seconds: 2.0,
            idle_cpu_share: Some(0.031),
            idle_monotonic_ns: None,
            warmup_turns: 0,
            pss_every: 1,
            growth: None,
            lag: None,
            render: None,
            checkpoints: Vec::new(),
            idle_output: None,
            startup_output: None,
            pastes: Vec::new(),
        });
    }
    side.metrics.insert(
        Metric::SessionGrowth,
        (0..2).map(|t| Observation::value(t, 1048576.0)).collect(),
    );
    side.metrics.insert(
        Metric::IdleCpu,
        (0..2).map(|t| Observation::value(t, 0.031)).collect(),
    );
    side.metrics.insert(
        Metric::FirstToken,
        (0..2).map(|t| Observation::value(t, 0.011)).collect(),
    );
    result
        .validate()
        .unwrap_or_else(|error| panic!("the session-like result is invalid: {error}"));
    result
}

/// The (x, y) of each data `<circle>` in a figure, in drawing order.
fn circles(figure: &str) -> Vec<(f64, f64)> {
    let start = figure.find("<g class=\"marks\">").expect("a marks group");
    figure[start..]
        .split("<circle ")
        .skip(1)
        .map(|circle| {
            let attribute = |name: &str| -> f64 {
                let at = circle.find(&format!("{name}=\"")).expect(name) + name.len() + 2;
                circle[at..at + circle[at..].find('"').unwrap()]
                    .parse()
                    .unwrap()
            };
            (attribute("cx"), attribute("cy"))
        })
        .collect()
}

#[test]
fn the_session_section_draws_turns_memory_and_one_turns_timeline() {
    let page = html::report(&session_like());
    let start = page
        .find("<section id=\"session\"><h2>Session: the agent at work</h2>")
        .expect("the session section");
    let section = &page[start..start + page[start..].find("</section>").unwrap()];
    for metric in ["turn", "submit", "first_token", "stream_render"] {
        let chart = figure(section, &format!("chart-session-{metric}"));
        assert_eq!(marks(chart, "polyline"), 2, "{metric}: a line per trial");
        assert_eq!(marks(chart, "circle"), 6, "{metric}: a dot per turn");
    }
    let memory = figure(section, "chart-session-memory");
    // A step line per trial, and each trial's fitted line after its warm-up, drawn
    // twice (a dark edge and the trial's colour).
    assert_eq!(
        marks(memory, "polyline"),
        2 * 3,
        "a step line and a fit per trial"
    );
    assert_eq!(marks(memory, "circle"), 6);
    assert!(memory.contains("proportional memory (MiB)"), "PSS is drawn");
    assert!(
        memory.contains("The median trial grows +1.0 MiB per turn"),
        "{memory}"
    );
    // Steps: held across a turn, straight up where the turns meet.
    let corners = first_polyline(memory);
    assert_eq!(corners.len(), 6, "{corners:?}");
    assert_eq!(corners[1].0, corners[2].0, "{corners:?}");
    assert!(corners[2].1 < corners[1].1, "turn 2 is higher: {corners:?}");
    assert!(section.contains("trial 1: grows +1.0 MiB per turn"));

    // The tool turn of the median trial (trial 0 of two, the lower middle).
    let timeline = figure(section, "chart-session-timeline");
    assert!(timeline.contains("Trial 0, turn 2"), "{timeline}");
    let labels = [
        "Enter",
        "request received",
        "tool call written",
        "result request received",
        "first chunk written",
        "first text visible",
        "last chunk written",
        "final text visible",
        "prompt takes input",
    ];
    let mut last = 0;
    for label in labels {
        let at = timeline[last..]
            .find(&format!(">\n{label}\n</text>"))
            .unwrap_or_else(|| panic!("the label {label:?}, in order: {timeline}"));
        last += at;
    }
    let dots = circles(timeline);
    assert_eq!(dots.len(), labels.len());
    // In time order, each lower than the last, none before Enter.
    for pair in dots.windows(2) {
        assert!(pair[1].0 >= pair[0].0 && pair[1].1 > pair[0].1, "{dots:?}");
    }
    // 0.05 s tool call + 0.21 s roundtrip.
    assert!(timeline.contains("260 ms"), "{timeline}");

    // Text from the result is escaped.
    assert!(
        section.contains("&lt;b&gt;anthropic&lt;/b&gt;"),
        "{section}"
    );
    assert!(!section.contains("<b>"));
}

#[test]
fn a_turn_without_a_tool_call_or_chunk_times_still_has_a_timeline() {
    let mut result = session_like();
    for run in &mut result.side.sessions {
        for turn in &mut run.turns {
            turn.tool_call_at_seconds = None;
            turn.tool_roundtrip_seconds = None;
            // A result written before the chunk times were recorded.
            turn.first_chunk_at_seconds = None;
            turn.last_chunk_at_seconds = None;
        }
    }
    let page = html::report(&result);
    let timeline = figure(&page, "chart-session-timeline");
    // The longest turn of the median trial: turn 2.
    assert!(timeline.contains("Trial 0, turn 2: the median trial&#39;s longest turn"));
    assert_eq!(circles(timeline).len(), 3, "Enter, request, prompt");
    assert!(!timeline.contains("tool call written"));
}

#[test]
fn session_growth_and_idle_cpu_show_with_their_units_and_meanings() {
    let page = html::report(&session_like());
    let summary = &page[page.find("<section id=\"summary\">").unwrap()..];
    let summary = &summary[..summary.find("</section>").unwrap()];
    assert!(summary.contains("<td>1.0 MiB/turn</td>"), "{summary}");
    assert!(summary.contains("<td>3.10%</td>"), "{summary}");
    assert!(page.contains(
        "<dt><code>session_growth</code> <span class=\"note\">(bytes per turn, lower is better)"
    ));
    assert!(page.contains(
        "<dt><code>idle_cpu</code> <span class=\"note\">(share of a core, lower is better)"
    ));
    assert!(page.contains(&html::escape(Metric::IdleCpu.description())));
}

#[test]
fn a_result_without_sessions_has_no_session_section() {
    assert!(!html::report(&demo_like()).contains("id=\"session\""));
}

#[test]
fn a_long_request_value_is_folded_under_the_request_line() {
    // A scenario's overrides carry its whole script: thousands of characters that filled
    // the page's first screen above the summary.
    let mut result = demo_like();
    let script = format!(
        "model.script={{ turns = [{}] }}",
        "{ prompt = \"step\" }, ".repeat(200)
    );
    result
        .request
        .config
        .insert("overrides".into(), script.clone());
    result
        .request
        .config
        .insert("target".into(), "demo-agent".into());
    let page = html::report(&result);
    let line_start = page.find("<p class=\"request\">").expect("request line");
    let line = &page[line_start..line_start + page[line_start..].find("</p>").unwrap()];
    let length = script.chars().count();
    assert!(
        line.contains(&format!("overrides ({length} characters, below)")),
        "{line}"
    );
    assert!(line.contains("target demo-agent"), "{line}");
    assert!(!line.contains("prompt"), "{line}");
    // The whole value is still on the page, escaped, in a folded block.
    assert!(
        page.contains(&format!(
            "<details class=\"request\"><summary>overrides ({length} characters)</summary>"
        )),
        "folded block missing"
    );
    assert!(page.contains("model.script={ turns = [{ prompt = &quot;step&quot; }"));
}
