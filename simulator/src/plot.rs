//! A hand-written SVG: arrivals per second at the primary over time, one polyline per policy,
//! outage windows shaded, the vendor's quota and the soft limit as dashed lines.
use crate::report::Row;
use crate::run::Run;
use crate::scenario::Scenario;
use std::fmt::Write;

const W: f64 = 1250.0;
const H: f64 = 500.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 380.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 55.0;
const COLOURS: [&str; 5] = ["#d62728", "#ff7f0e", "#9467bd", "#8c564b", "#1f77b4"];

pub fn svg(sc: &Scenario, runs: &[Run], rows: &[Row], plot_s: u64) -> String {
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let per_s = |n: u32, q_ms: u64| n as f64 * 1000.0 / q_ms as f64;
    let quota = sc.vendor.quota.as_ref().map(|q| per_s(q.requests, q.period_ms));
    let soft = sc.soft_limit_of(&sc.vendor).map(|l| l.requests as f64 * 1000.0 / l.period_ms as f64);
    let peak = runs.iter().flat_map(|r| r.tally.per_second.iter().take(plot_s as usize + 1)).copied().max().unwrap_or(0)
        as f64;
    let y_max = nice(peak.max(quota.unwrap_or(0.0)).max(1.0) * 1.05);
    let x = |s: f64| LEFT + s / plot_s as f64 * pw;
    let y = |v: f64| TOP + ph - v / y_max * ph;

    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(o, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(o, r#"<text x="{LEFT}" y="22" font-size="15" font-weight="bold">{}</text>"#, esc(&sc.name));
    let _ = writeln!(
        o,
        r##"<text x="{LEFT}" y="40" fill="#555">requests arriving at the vendor per second, by policy (seed {})</text>"##,
        sc.seed
    );
    for outage in &sc.vendor.outages {
        let (a, b) =
            (outage.from_ms as f64 / 1000.0, (outage.to_ms.min(sc.horizon_ms) as f64 / 1000.0).min(plot_s as f64));
        if a < plot_s as f64 {
            let _ = writeln!(
                o,
                r##"<rect x="{:.1}" y="{TOP}" width="{:.1}" height="{ph}" fill="#f2d0d0" opacity="0.6"><title>outage: {}</title></rect>"##,
                x(a),
                x(b) - x(a),
                esc(&outage.refusal.label())
            );
            let _ = writeln!(
                o,
                r##"<text x="{:.1}" y="{:.1}" fill="#a33">outage {}</text>"##,
                x(a) + 4.0,
                TOP + 14.0,
                esc(&outage.refusal.label())
            );
        }
    }
    // Axes, ticks and grid.
    let _ = writeln!(
        o,
        r##"<g stroke="#999" stroke-width="1"><line x1="{LEFT}" y1="{}" x2="{}" y2="{}"/><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{}"/></g>"##,
        TOP + ph,
        LEFT + pw,
        TOP + ph,
        TOP + ph
    );
    let ystep = nice(y_max / 6.0);
    for k in 0..=((y_max / ystep + 1e-9) as u64) {
        let v = k as f64 * ystep;
        let _ = writeln!(
            o,
            r##"<line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#eee"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            y(v),
            LEFT + pw,
            y(v),
            LEFT - 6.0,
            y(v) + 4.0,
            num(v)
        );
    }
    let xstep = nice(plot_s as f64 / 10.0).max(1.0);
    for k in 0..=((plot_s as f64 / xstep + 1e-9) as u64) {
        let s = k as f64 * xstep;
        let _ = writeln!(
            o,
            r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#999"/><text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            x(s),
            TOP + ph,
            x(s),
            TOP + ph + 5.0,
            x(s),
            TOP + ph + 19.0,
            num(s)
        );
    }
    let _ = writeln!(o, r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">time (s)</text>"#, LEFT + pw / 2.0, H - 12.0);
    let _ = writeln!(
        o,
        r#"<text x="18" y="{:.1}" text-anchor="middle" transform="rotate(-90 18 {:.1})">arrivals per second</text>"#,
        TOP + ph / 2.0,
        TOP + ph / 2.0
    );
    // The quota's label above its line at the right end; the soft limit's below its own, moved
    // to the left end when the two lines are too close for both labels.
    let close = matches!((quota, soft), (Some(q), Some(l)) if y(l) - y(q) < 30.0);
    for (value, label, colour, below) in
        [(quota, "vendor quota", "#d62728", false), (soft, "soft limit", "#2ca02c", true)]
    {
        if let Some(q) = value {
            let (lx, anchor) = if below && close { (LEFT + 4.0, "start") } else { (LEFT + pw - 4.0, "end") };
            let ly = if below && !close { (y(q) + 13.0).min(TOP + ph - 3.0) } else { y(q) - 4.0 };
            let _ = writeln!(
                o,
                r#"<line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{colour}" stroke-dasharray="6 4"/><text x="{lx:.1}" y="{ly:.1}" fill="{colour}" text-anchor="{anchor}">{label} {}/s</text>"#,
                y(q),
                LEFT + pw,
                y(q),
                num(q)
            );
        }
    }
    // One polyline per policy, drawn so that this product ends up on top.
    for (i, run) in runs.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let width = if run.policy.shared() { 2.2 } else { 1.3 };
        let mut pts = String::new();
        for sec in 0..=plot_s {
            let n = run.tally.per_second.get(sec as usize).copied().unwrap_or(0) as f64;
            let _ = write!(pts, "{:.1},{:.1} ", x(sec as f64 + 0.5).min(LEFT + pw), y(n.min(y_max)));
        }
        let _ = writeln!(
            o,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="{width}" stroke-linejoin="round" points="{}"><title>{}</title></polyline>"#,
            pts.trim_end(),
            esc(&rows[i].label)
        );
        // Bans of this policy: a bar in its colour along the top of the plot.
        for &(from, until) in &run.bans {
            let (a, b) = (from as f64 / 1000.0, (until as f64 / 1000.0).min(plot_s as f64));
            if a < plot_s as f64 {
                let by = TOP + 22.0 + i as f64 * 7.0;
                let _ = writeln!(
                    o,
                    r#"<rect x="{:.1}" y="{by:.1}" width="{:.1}" height="5" fill="{colour}" opacity="0.8"><title>{} banned</title></rect>"#,
                    x(a),
                    (x(b) - x(a)).max(1.0),
                    esc(&rows[i].label)
                );
            }
        }
        let ly = TOP + 10.0 + i as f64 * 36.0;
        let lx = LEFT + pw + 18.0;
        let _ = writeln!(
            o,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
            lx + 22.0,
            lx + 28.0,
            ly + 4.0,
            esc(&rows[i].label)
        );
        let r = &rows[i];
        let _ = writeln!(
            o,
            r##"<text x="{}" y="{}" fill="#555" font-size="11">{} requests, {} x 429, banned {:.0} s, lost {}</text>"##,
            lx + 28.0,
            ly + 18.0,
            r.requests,
            r.over_quota,
            r.banned_s,
            r.lost
        );
    }
    if runs.iter().any(|r| !r.bans.is_empty()) {
        let _ = writeln!(
            o,
            r##"<text x="{:.1}" y="{:.1}" fill="#555" font-size="11">bars along the top: time banned</text>"##,
            LEFT + pw + 18.0,
            TOP + 10.0 + runs.len() as f64 * 36.0
        );
    }
    o += "</svg>\n";
    o
}

/// 1, 2 or 5 times a power of ten, at or above `v`.
fn nice(v: f64) -> f64 {
    if v <= 0.0 {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * p).find(|&c| c >= v - 1e-9).unwrap_or(10.0 * p)
}

/// A tick label: at most three decimals, no trailing zeros.
fn num(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::nice;

    #[test]
    fn nice_steps() {
        assert_eq!(nice(0.7), 1.0);
        assert_eq!(nice(3.0), 5.0);
        assert_eq!(nice(41.0), 50.0);
        assert_eq!(nice(100.0), 100.0);
    }
}
