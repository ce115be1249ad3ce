//! A small SVG writer for the report page's charts: horizontal bars of shares (0 to 100 %), one group of
//! bars per category and one bar per series (e.g. before and after). Every text is escaped; the chart is
//! an `img` for assistive technology, named by its `<title>` and described by its `<desc>`, and the page
//! shows the same figures in a table next to it. No script, font or link: the SVG is inline and static.

use std::fmt::Write;

/// One series of bars: a name for the legend, a fill colour and one share per category (`None`: no
/// figure, drawn as "n/a").
pub struct Series<'a> {
    /// Legend text.
    pub name: &'a str,
    /// CSS colour of the bars.
    pub color: &'a str,
    /// A share in [0, 1] per category.
    pub values: Vec<Option<f64>>,
}

/// A horizontal bar chart of shares.
pub struct BarChart<'a> {
    /// Unique id on the page (prefix of the title and description ids).
    pub id: &'a str,
    /// The chart's name (its `<title>`).
    pub title: &'a str,
    /// A sentence saying what the chart shows (its `<desc>`).
    pub description: &'a str,
    /// The category of each group of bars.
    pub categories: Vec<String>,
    /// The series, drawn in order within each group.
    pub series: Vec<Series<'a>>,
}

const WIDTH: f64 = 720.0;
const LABEL_WIDTH: f64 = 210.0;
const VALUE_WIDTH: f64 = 70.0;
const BAR_HEIGHT: f64 = 14.0;
const GROUP_GAP: f64 = 10.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 24.0;
/// Category labels longer than this are cut (the table next to the chart has them whole).
const MAX_LABEL_CHARS: usize = 32;

/// Escapes text for SVG (XML) content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A share as a percentage with one decimal ("n/a" for none); a share that would round to 0 % or
/// 100 % without being either says so ("< 0.1 %", "> 99.9 %"), so that a small risk never reads as none.
pub fn percent(value: Option<f64>) -> String {
    match value {
        Some(v) if v > 0.0 && v < 0.0005 => "< 0.1 %".to_string(),
        Some(v) if (0.9995..1.0).contains(&v) => "> 99.9 %".to_string(),
        Some(v) if v.is_finite() => format!("{:.1} %", v * 100.0),
        _ => "n/a".to_string(),
    }
}

fn label(text: &str) -> String {
    if text.chars().count() <= MAX_LABEL_CHARS {
        text.to_string()
    } else {
        let cut: String = text.chars().take(MAX_LABEL_CHARS - 1).collect();
        format!("{cut}…")
    }
}

impl BarChart<'_> {
    /// The chart as an inline `<svg>` element.
    pub fn render(&self) -> String {
        let per_group = self.series.len().max(1) as f64 * BAR_HEIGHT + GROUP_GAP;
        let plot_height = per_group * self.categories.len() as f64;
        let height = TOP + plot_height + BOTTOM;
        let plot_width = WIDTH - LABEL_WIDTH - VALUE_WIDTH;
        let id = escape(self.id);
        let mut svg = String::with_capacity(4096);
        // writing into a String cannot fail
        let _ = write!(
            svg,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" aria-labelledby="{id}-title {id}-desc"><title id="{id}-title">{}</title><desc id="{id}-desc">{}</desc>"#,
            escape(self.title),
            escape(self.description)
        );
        // legend
        let mut x = LABEL_WIDTH;
        for series in &self.series {
            let _ = write!(
                svg,
                r#"<rect x="{x}" y="8" width="12" height="12" fill="{}"/><text x="{}" y="18" class="legend">{}</text>"#,
                escape(series.color),
                x + 16.0,
                escape(series.name)
            );
            x += 24.0 + 8.0 * series.name.chars().count() as f64;
        }
        // grid and scale
        for step in 0..=4 {
            let share = step as f64 / 4.0;
            let gx = LABEL_WIDTH + share * plot_width;
            let _ = write!(
                svg,
                r#"<line x1="{gx}" y1="{TOP}" x2="{gx}" y2="{}" class="grid"/><text x="{gx}" y="{}" class="scale" text-anchor="middle">{} %</text>"#,
                TOP + plot_height,
                TOP + plot_height + 16.0,
                step * 25
            );
        }
        for (i, category) in self.categories.iter().enumerate() {
            let group_top = TOP + i as f64 * per_group + GROUP_GAP / 2.0;
            let middle = group_top + self.series.len() as f64 * BAR_HEIGHT / 2.0;
            let _ = write!(
                svg,
                r#"<text x="{}" y="{}" class="category" text-anchor="end">{}</text>"#,
                LABEL_WIDTH - 8.0,
                middle + 4.0,
                escape(&label(category))
            );
            for (s, series) in self.series.iter().enumerate() {
                let value = series.values.get(i).copied().flatten();
                let y = group_top + s as f64 * BAR_HEIGHT;
                let share = value
                    .filter(|v| v.is_finite())
                    .unwrap_or(0.0)
                    .clamp(0.0, 1.0);
                let bar = share * plot_width;
                let _ = write!(
                    svg,
                    r#"<rect x="{LABEL_WIDTH}" y="{}" width="{bar:.2}" height="{}" fill="{}"/><text x="{:.2}" y="{}" class="value">{}</text>"#,
                    y + 1.0,
                    BAR_HEIGHT - 2.0,
                    escape(series.color),
                    LABEL_WIDTH + bar + 4.0,
                    y + BAR_HEIGHT - 3.0,
                    percent(value)
                );
            }
        }
        svg.push_str("</svg>");
        svg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(categories: Vec<String>) -> BarChart<'static> {
        BarChart {
            id: "risk",
            title: "Risk <before> & after",
            description: "shares",
            categories,
            series: vec![
                Series {
                    name: "before",
                    color: "#b54a2c",
                    values: vec![Some(1.0), Some(0.25)],
                },
                Series {
                    name: "after",
                    color: "#2c6fb5",
                    values: vec![Some(0.2), None],
                },
            ],
        }
    }

    #[test]
    fn bars_are_as_long_as_their_shares() {
        let svg = chart(vec!["prosecutor".into(), "marketer".into()]).render();
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        let plot = WIDTH - LABEL_WIDTH - VALUE_WIDTH;
        assert!(svg.contains(&format!(r#"width="{:.2}""#, plot)));
        assert!(svg.contains(&format!(r#"width="{:.2}""#, plot * 0.25)));
        assert!(svg.contains(&format!(r#"width="{:.2}""#, plot * 0.2)));
        assert!(svg.contains("100.0 %") && svg.contains("25.0 %") && svg.contains("n/a"));
        assert_eq!(svg.matches("<rect").count(), 2 + 4);
    }

    #[test]
    fn shares_near_the_ends_are_not_rounded_away() {
        assert_eq!(percent(Some(0.0)), "0.0 %");
        assert_eq!(percent(Some(0.0004)), "< 0.1 %");
        assert_eq!(percent(Some(0.0005)), "0.1 %");
        assert_eq!(percent(Some(0.9996)), "> 99.9 %");
        assert_eq!(percent(Some(1.0)), "100.0 %");
        assert_eq!(percent(None), "n/a");
        assert_eq!(percent(Some(f64::NAN)), "n/a");
    }

    #[test]
    fn text_is_escaped_and_labels_cut() {
        let long = "a<b>".repeat(20);
        let svg = chart(vec![long, "x".into()]).render();
        assert!(svg.contains("Risk &lt;before&gt; &amp; after"));
        assert!(!svg.contains("<b>"));
        assert!(svg.contains('…'));
        assert!(
            svg.contains(r#"role="img""#)
                && svg.contains(r#"aria-labelledby="risk-title risk-desc""#)
        );
    }

    #[test]
    fn out_of_range_shares_stay_inside_the_plot() {
        let mut c = chart(vec!["a".into(), "b".into()]);
        c.series[0].values = vec![Some(7.0), Some(f64::NAN)];
        let svg = c.render();
        let plot = WIDTH - LABEL_WIDTH - VALUE_WIDTH;
        assert!(svg.contains(&format!(r#"width="{:.2}""#, plot)));
        assert!(!svg.contains("NaN"));
    }
}
